package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
)

// etcdClients are the server's etcd clients: main, of --etcd-servers or
// the embedded etcd, and one per distinct server list of
// --etcd-servers-overrides (kube shares a client between overrides that
// name the same servers, in any order).
type etcdClients struct {
	main *clientv3.Client
	// overrides are the override clients in the order their server lists
	// are first named; byResource is each overridden resource's.
	overrides  []*clientv3.Client
	byResource map[schema.GroupResource]*clientv3.Client
}

// all is main and then the overrides.
func (c etcdClients) all() []*clientv3.Client {
	return append([]*clientv3.Client{c.main}, c.overrides...)
}

// connectEtcd starts the embedded etcd (no --etcd-servers) and connects
// to it or to --etcd-servers, and to the servers of the overrides.
func (s *Server) connectEtcd(o *Options) (etcdClients, error) {
	endpoints := o.EtcdServers
	tlsConfig, err := etcdTLSConfig(o.EtcdClient.CAFile, o.EtcdClient.CertFile, o.EtcdClient.KeyFile)
	if err != nil {
		return etcdClients{}, err
	}
	mainTLS := tlsConfig
	if len(endpoints) == 0 {
		etcd, err := startEmbeddedEtcd(context.Background(), o)
		if err != nil {
			return etcdClients{}, err
		}
		s.cleanup = append(s.cleanup, etcd.Stop)
		s.reportEtcdFailure(etcd)
		endpoints = []string{etcd.ClientURL()}
		s.EtcdTLSFiles = etcd.ClientTLS()
		if mainTLS, err = s.EtcdTLSFiles.ClientConfig(); err != nil {
			return etcdClients{}, err
		}
	}
	s.EtcdURL, s.EtcdTLS = endpoints[0], mainTLS
	clients := etcdClients{byResource: map[schema.GroupResource]*clientv3.Client{}}
	if clients.main, err = s.newEtcdClient(endpoints, mainTLS); err != nil {
		return etcdClients{}, fmt.Errorf("--etcd-servers: %w", err)
	}
	overrides, _ := parseEtcdOverrides(o.EtcdClient.ServersOverrides) // validated already
	byServers := map[string]*clientv3.Client{}
	for _, ov := range overrides {
		key := strings.Join(slices.Sorted(slices.Values(ov.Servers)), ";")
		client, ok := byServers[key]
		if !ok {
			if client, err = s.newEtcdClient(ov.Servers, tlsConfig); err != nil {
				return etcdClients{}, fmt.Errorf("--etcd-servers-overrides: %w", err)
			}
			byServers[key] = client
			clients.overrides = append(clients.overrides, client)
		}
		clients.byResource[ov.Resource] = client
	}
	return clients, nil
}

// newEtcdClient connects to the members at endpoints (the client's
// balancer spreads requests over those that answer, and fails over when
// one goes), closed at cleanup.
func (s *Server) newEtcdClient(endpoints []string, tlsConfig *tls.Config) (*clientv3.Client, error) {
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         tlsConfig,
		DialTimeout: 20 * time.Second,
		Logger:      zap.NewNop(),
		// Reads and writes give up rather than hang when etcd is gone.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	s.cleanup = append(s.cleanup, func() { client.Close() }, s.etcdSizes.MonitorSize(client))
	return client, nil
}

// etcdTLSConfig is the TLS client configuration of --etcd-cafile,
// --etcd-certfile and --etcd-keyfile, nil when none is set: as kube's,
// http:// servers are then dialled in the clear and https:// ones
// verified against the system's roots.
func etcdTLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	cfg, err := transport.TLSInfo{CertFile: certFile, KeyFile: keyFile, TrustedCAFile: caFile}.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--etcd-cafile, --etcd-certfile, --etcd-keyfile: %w", err)
	}
	return cfg, nil
}

// etcdChecks are kube's etcd checks: "etcd" (/healthz, /livez and
// /readyz) and "etcd-readiness" (/readyz only) for the main etcd, and
// "etcd-override-N" and "etcd-override-readiness-N" for the N-th server
// list of the overrides; and this server's "etcd-alarms" (/readyz).
func etcdChecks(o *Options, clients etcdClients) (health, ready []healthz.Check) {
	healthTimeout, readyTimeout := checkTimeout(o.EtcdClient.HealthcheckTimeout), checkTimeout(o.EtcdClient.ReadycheckTimeout)
	health = []healthz.Check{etcdCheck("etcd", clients.main, o.EtcdPrefix, healthTimeout)}
	ready = []healthz.Check{etcdCheck("etcd-readiness", clients.main, o.EtcdPrefix, readyTimeout), etcdAlarmsCheck(clients.main, readyTimeout)}
	for i, c := range clients.overrides {
		health = append(health, etcdCheck(fmt.Sprintf("etcd-override-%d", i), c, o.EtcdPrefix, healthTimeout))
		ready = append(ready, etcdCheck(fmt.Sprintf("etcd-override-readiness-%d", i), c, o.EtcdPrefix, readyTimeout))
	}
	return health, ready
}

// etcdCheck passes when a quorum read (of <prefix>/health, as kube's
// probe) answers within timeout: a check that hangs would hold up every
// probe of the endpoint.
func etcdCheck(name string, client *clientv3.Client, prefix string, timeout time.Duration) healthz.Check {
	key := path.Join("/", prefix, "health")
	return healthz.Check{Name: name, Fn: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if _, err := client.Get(ctx, key, clientv3.WithCountOnly()); err != nil {
			return fmt.Errorf("error getting data from etcd: %w", err)
		}
		return nil
	}}
}

// etcdAlarmsCheck fails while etcd has an alarm raised: NOSPACE (its
// space quota is used up, writes fail) or CORRUPT. kube-apiserver's
// readiness does not look; here an operator sees it in /readyz?verbose.
// It is bounded as etcd-readiness is: with etcd gone, it would otherwise
// hold /readyz for as long as the client waits for a connection.
func etcdAlarmsCheck(client *clientv3.Client, timeout time.Duration) healthz.Check {
	return healthz.Check{Name: "etcd-alarms", Fn: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		alarms, err := etcd3.Alarms(ctx, client)
		if err != nil {
			return err
		}
		if len(alarms) > 0 {
			return fmt.Errorf("etcd alarms raised: %v", alarms)
		}
		return nil
	}}
}
