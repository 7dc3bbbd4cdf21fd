package app

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EtcdClientOptions are kube-apiserver's flags of how the server talks to
// etcd beyond --etcd-servers: TLS, per-resource servers and the timeouts
// of the health checks.
type EtcdClientOptions struct {
	// CAFile, CertFile and KeyFile are kube's --etcd-cafile,
	// --etcd-certfile and --etcd-keyfile: the CA that https:// servers of
	// --etcd-servers (and of the overrides) are verified against, and the
	// client certificate presented to them.
	CAFile, CertFile, KeyFile string
	// ServersOverrides is kube's --etcd-servers-overrides:
	// "group/resource#url;url" entries.
	ServersOverrides []string
	// HealthcheckTimeout bounds the etcd check of /healthz, /livez and
	// /readyz; ReadycheckTimeout that of /readyz's etcd-readiness. 0 is
	// kube's default, 2 s (see checkTimeout).
	HealthcheckTimeout, ReadycheckTimeout time.Duration
	// CountMetricPollPeriod is how often apiserver_storage_objects is
	// counted (0: never).
	CountMetricPollPeriod time.Duration
	// StorageBackend is kube's --storage-backend: etcd3 is the only one.
	StorageBackend string
}

func defaultEtcdClientOptions() EtcdClientOptions {
	// kube's defaults (k8s.io/apiserver storagebackend).
	return EtcdClientOptions{HealthcheckTimeout: 2 * time.Second, ReadycheckTimeout: 2 * time.Second, CountMetricPollPeriod: time.Minute}
}

func (o *EtcdClientOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CAFile, "etcd-cafile", o.CAFile,
		"CA certificate (PEM) that the https:// servers of --etcd-servers and --etcd-servers-overrides are verified against (default: the system's roots).")
	fs.StringVar(&o.CertFile, "etcd-certfile", o.CertFile,
		"Client certificate (PEM) presented to the etcd servers of --etcd-servers and --etcd-servers-overrides; with --etcd-keyfile.")
	fs.StringVar(&o.KeyFile, "etcd-keyfile", o.KeyFile, "Private key (PEM) of --etcd-certfile.")
	fs.StringSliceVar(&o.ServersOverrides, "etcd-servers-overrides", o.ServersOverrides,
		"Per-resource etcd servers, comma separated, each group/resource#servers with the servers' URLs separated by semicolons, "+
			`e.g. "/events#https://etcd-events:2379": that resource is stored there (same TLS files as --etcd-servers). Built-in resources only.`)
	fs.DurationVar(&o.HealthcheckTimeout, "etcd-healthcheck-timeout", o.HealthcheckTimeout,
		"The timeout of the etcd check of /healthz, /livez and /readyz (0: 2s).")
	fs.DurationVar(&o.ReadycheckTimeout, "etcd-readycheck-timeout", o.ReadycheckTimeout,
		"The timeout of the etcd-readiness check of /readyz (0: 2s).")
	fs.DurationVar(&o.CountMetricPollPeriod, "etcd-count-metric-poll-period", o.CountMetricPollPeriod,
		"How often the objects of each resource are counted in etcd (apiserver_storage_objects). 0 disables the metric.")
	fs.StringVar(&o.StorageBackend, "storage-backend", o.StorageBackend, "The storage backend: 'etcd3' (the default, and the only one).")
}

// etcdOverride is one entry of --etcd-servers-overrides.
type etcdOverride struct {
	Resource schema.GroupResource
	Servers  []string
}

var errOverridesInvalid = errors.New("--etcd-servers-overrides: must be of format group/resource#servers, where servers are URLs, semicolon separated")

// parseEtcdOverrides parses --etcd-servers-overrides as kube does; each
// server must also be an http:// or https:// URL, as in --etcd-servers.
func parseEtcdOverrides(entries []string) ([]etcdOverride, error) {
	var overrides []etcdOverride
	for _, entry := range entries {
		gr, list, ok := strings.Cut(entry, "#")
		group, resource, okGR := strings.Cut(gr, "/")
		if !ok || !okGR || strings.Contains(list, "#") || strings.Contains(resource, "/") {
			return nil, errOverridesInvalid
		}
		servers := strings.Split(list, ";")
		for _, s := range servers {
			if s == "" {
				return nil, errOverridesInvalid
			}
			if err := checkEtcdURL(s); err != nil {
				return nil, fmt.Errorf("--etcd-servers-overrides: %w", err)
			}
		}
		overrides = append(overrides, etcdOverride{Resource: schema.GroupResource{Group: group, Resource: resource}, Servers: servers})
	}
	return overrides, nil
}

// checkEtcdURL checks s is an etcd client URL the client can dial.
func checkEtcdURL(s string) error {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}

// validate checks the flags; etcdServers is --etcd-servers.
func (o *EtcdClientOptions) validate(etcdServers []string) error {
	if o.StorageBackend != "" && o.StorageBackend != "etcd3" {
		return fmt.Errorf("--storage-backend: %q is not etcd3, the only storage backend", o.StorageBackend)
	}
	if _, err := parseEtcdOverrides(o.ServersOverrides); err != nil {
		return err
	}
	tlsFlags := map[string]string{"--etcd-cafile": o.CAFile, "--etcd-certfile": o.CertFile, "--etcd-keyfile": o.KeyFile}
	for _, flag := range slices.Sorted(maps.Keys(tlsFlags)) {
		// The embedded etcd's TLS is the server's own: the files would
		// apply to nothing.
		if tlsFlags[flag] != "" && len(etcdServers) == 0 && len(o.ServersOverrides) == 0 {
			return fmt.Errorf("%s: only with --etcd-servers or --etcd-servers-overrides", flag)
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return fmt.Errorf("--etcd-certfile and --etcd-keyfile: set both or neither")
	}
	switch {
	case o.HealthcheckTimeout < 0:
		return fmt.Errorf("--etcd-healthcheck-timeout: must not be negative")
	case o.ReadycheckTimeout < 0:
		return fmt.Errorf("--etcd-readycheck-timeout: must not be negative")
	case o.CountMetricPollPeriod < 0:
		return fmt.Errorf("--etcd-count-metric-poll-period: must not be negative")
	}
	return nil
}

// checkTimeout is a check's timeout flag, 0 meaning kube's default.
func checkTimeout(flag time.Duration) time.Duration {
	if flag == 0 {
		return 2 * time.Second
	}
	return flag
}
