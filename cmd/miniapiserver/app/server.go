package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/crd"
	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apps"
	"github.com/miniapiserver/miniapiserver/pkg/registry/autoscaling"
	"github.com/miniapiserver/miniapiserver/pkg/registry/coordination"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	eventsgroup "github.com/miniapiserver/miniapiserver/pkg/registry/events"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
)

// Server is a running miniapiserver.
type Server struct {
	// SecureURL is the HTTPS endpoint (https://host:port).
	SecureURL string
	// InsecureURL is the plain HTTP endpoint, when --insecure-port is set.
	InsecureURL string
	// AdminToken is the generated admin token ("" with --token-auth-file).
	AdminToken string
	// CAPEM is the certificate clients trust (nil with --tls-cert-file).
	CAPEM []byte
	// KubeconfigPath is the generated kubeconfig ("" with --token-auth-file).
	KubeconfigPath string
	// EtcdURL is the etcd the server uses (the embedded one's, or the first
	// of --etcd-servers).
	EtcdURL string

	readyChecks []healthz.Check

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	errs     chan error
	stopOnce sync.Once
	cleanup  []func() // in reverse order of start
}

// Start starts a server with options o and returns once it serves. Stop
// it with Stop.
func Start(o *Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	s := &Server{errs: make(chan error, 2)}
	ok := false
	defer func() {
		if !ok {
			s.runCleanup()
		}
	}()
	client, err := s.connectEtcd(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel

	// The serving CA is published in every namespace (kube-root-ca.crt).
	cert, caPEM, err := servingCert(o)
	if err != nil {
		return nil, err
	}
	s.CAPEM = caPEM
	groups, wired, getter, err := buildGroups(o, etcd3.NewFactory(client), caPEM)
	if err != nil {
		return nil, err
	}
	coreStorage := wired.core
	s.cleanup = append(s.cleanup, func() {
		for i := range groups {
			groups[i].Destroy()
		}
	})
	if err := getter.checkResources("--watch-cache-sizes", watchCacheSizeNames(o)); err != nil {
		return nil, err
	}

	auth, token, err := authenticator(o)
	if err != nil {
		return nil, err
	}
	s.AdminToken = token
	s.readyChecks = []healthz.Check{etcdCheck(client), watchCacheCheck(groups)}
	api, err := apiserver.New(apiserver.Config{
		APIGroups:     groups,
		Authenticator: auth,
		Admission: admission.Chain{
			&admission.NamespaceLifecycle{Namespaces: coreStorage.Namespaces},
			&admission.LimitRanger{LimitRanges: coreStorage.LimitRanges},
		},
		ReadyzChecks:      s.readyChecks,
		MinRequestTimeout: o.MinRequestTimeout,
		RequestTimeout:    o.RequestTimeout,
		Version:           Version(),
		EnableProfiling:   o.Profiling,
	})
	if err != nil {
		return nil, err
	}
	if err := ensureSystemNamespaces(ctx, coreStorage.Namespaces); err != nil {
		return nil, err
	}

	secureLn, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("--secure-port: %w", err)
	}
	s.SecureURL = "https://" + clientAddress(secureLn.Addr().(*net.TCPAddr))
	ensureKubernetesService(ctx, o, coreStorage.Services, secureLn.Addr().(*net.TCPAddr).Port)
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12}
	s.serve(ctx, secureLn, api.SecureHandler(), tlsConfig, o.ShutdownTimeout)
	if o.InsecurePort != 0 {
		insecureLn, err := net.Listen("tcp", net.JoinHostPort(o.InsecureBindAddr, strconv.Itoa(o.InsecurePort)))
		if err != nil {
			return nil, fmt.Errorf("--insecure-port: %w", err)
		}
		s.InsecureURL = "http://" + clientAddress(insecureLn.Addr().(*net.TCPAddr))
		s.serve(ctx, insecureLn, api.InsecureHandler(), nil, o.ShutdownTimeout)
	}
	if token != "" {
		s.KubeconfigPath = filepath.Join(o.DataDir, "kubeconfig")
		if err := writeKubeconfig(s.KubeconfigPath, s.SecureURL, token, caPEM); err != nil {
			return nil, fmt.Errorf("--data-dir: writing the kubeconfig: %w", err)
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		etcd3.RunCompactor(ctx, client, o.EtcdCompactionInterval)
	}()
	crdController := crd.New(crd.Config{
		Definitions: wired.apiextensions.CustomResourceDefinitions, Status: wired.apiextensions.Status,
		Server: api, Storage: customResourceOptions{getter},
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		crdController.Run(ctx)
	}()
	if o.NamespaceController {
		nc := namespaceController(groups, coreStorage.Namespaces, coreStorage.NamespaceFinalize, crdController)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			nc.Run(ctx)
		}()
	}
	ok = true
	return s, nil
}

// connectEtcd starts the embedded etcd (no --etcd-servers) and connects.
func (s *Server) connectEtcd(o *Options) (*clientv3.Client, error) {
	endpoints := o.EtcdServers
	if len(endpoints) == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		etcd, err := embedetcd.Start(ctx, embedetcd.Config{Dir: filepath.Join(o.DataDir, "etcd"), UnsafeNoFsync: o.EtcdUnsafeNoFsync})
		if err != nil {
			return nil, err
		}
		s.cleanup = append(s.cleanup, etcd.Stop)
		endpoints = []string{etcd.ClientURL()}
	}
	s.EtcdURL = endpoints[0]
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 20 * time.Second,
		Logger:      zap.NewNop(),
		// Reads and writes give up rather than hang when etcd is gone.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("--etcd-servers: %w", err)
	}
	s.cleanup = append(s.cleanup, func() { client.Close() })
	return client, nil
}

// RESTStorageProviders are the providers of every served API group, in
// the order discovery lists them, configured from o. rootCA is the PEM
// published in every namespace (nil: none). The OpenAPI generator
// (hack/openapi-gen) builds its groups from the same list.
func RESTStorageProviders(o *Options, rootCA []byte) ([]generic.RESTStorageProvider, error) {
	events := &generic.StoreRef{}
	coreProvider, err := coreStorageProvider(o, rootCA, events)
	if err != nil {
		return nil, err
	}
	return append([]generic.RESTStorageProvider{coreProvider}, groupStorageProviders(events, nil)...), nil
}

// coreStorageProvider is the provider of the core group, configured from o.
// It hands its events store to events.
func coreStorageProvider(o *Options, rootCA []byte, events *generic.StoreRef) (core.RESTStorageProvider, error) {
	serviceRange, err := o.serviceClusterIPRange()
	if err != nil {
		return core.RESTStorageProvider{}, err
	}
	return core.RESTStorageProvider{ServiceClusterIPRange: serviceRange, EventTTL: o.EventTTL, RootCA: rootCA, Events: events}, nil
}

// groupStorageProviders are the providers of the named groups, in the
// order discovery lists them (after the core group). events.k8s.io serves
// the core group's events store, set once the core group is built;
// apiextensions.k8s.io hands its storage to crds (when not nil).
func groupStorageProviders(coreEvents *generic.StoreRef, crds *apiextensions.Storage) []generic.RESTStorageProvider {
	return []generic.RESTStorageProvider{
		apps.RESTStorageProvider{},
		eventsgroup.RESTStorageProvider{Events: coreEvents},
		autoscaling.RESTStorageProvider{},
		apiextensions.RESTStorageProvider{Storage: crds},
		coordination.RESTStorageProvider{},
	}
}

// wiring is what the server uses of the groups' storage besides their
// routes: the typed handles their providers give.
type wiring struct {
	core          core.LegacyRESTStorage
	apiextensions apiextensions.Storage
}

// buildGroups builds the storage of every API group (the core group
// first), and returns the typed handles of their storage that the rest of
// the wiring uses.
func buildGroups(o *Options, factory storage.Factory, rootCA []byte) ([]rest.APIGroupInfo, wiring, *restOptionsGetter, error) {
	events := &generic.StoreRef{}
	coreProvider, err := coreStorageProvider(o, rootCA, events)
	if err != nil {
		return nil, wiring{}, nil, err
	}
	getter := &restOptionsGetter{
		factory:   factory,
		prefix:    o.EtcdPrefix,
		seen:      map[string]bool{},
		decorator: decoratorFor(o),
	}
	var wired wiring
	coreStorage, coreInfo, err := coreProvider.NewLegacyRESTStorage(getter)
	if err != nil {
		return nil, wiring{}, nil, fmt.Errorf("building the core API group: %w", err)
	}
	wired.core = coreStorage
	groups := []rest.APIGroupInfo{coreInfo}
	for _, p := range groupStorageProviders(events, &wired.apiextensions) {
		info, err := p.NewRESTStorage(getter)
		if err != nil {
			for i := range groups {
				groups[i].Destroy()
			}
			return nil, wiring{}, nil, fmt.Errorf("building the %q API group: %w", p.GroupName(), err)
		}
		groups = append(groups, info)
	}
	return groups, wired, getter, nil
}

func watchCacheSizeNames(o *Options) []string {
	sizes, _ := parseWatchCacheSizes(o.WatchCacheSizes)
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	return names
}

// serve serves h on ln until ctx ends; a serving error stops the server.
func (s *Server) serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config, timeout time.Duration) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := apiserver.Serve(ctx, ln, h, tlsConfig, timeout); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- fmt.Errorf("serving on %s: %w", ln.Addr(), err)
			s.cancel()
		}
	}()
}

// Stop shuts the server down gracefully (requests in flight get the
// shutdown timeout, watches end at once), then releases the storage, the
// etcd client and the embedded etcd, in that order.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
		s.runCleanup()
	})
}

// WaitForReady waits until the readiness checks of /readyz pass (the watch
// caches have their first lists), or ctx ends.
func (s *Server) WaitForReady(ctx context.Context) error {
	ticker := time.NewTicker(5 * time.Millisecond)
	defer ticker.Stop()
	for {
		ready := true
		for _, c := range s.readyChecks {
			if c.Fn(ctx) != nil {
				ready = false
				break
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// Err returns a channel that receives a serving error, if serving fails.
func (s *Server) Err() <-chan error { return s.errs }

func (s *Server) runCleanup() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
	s.cleanup = nil
}

// clientAddress is the address clients use for a listener: a loopback
// address when it listens on every interface.
func clientAddress(addr *net.TCPAddr) string {
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return (&url.URL{Host: net.JoinHostPort(host, strconv.Itoa(addr.Port))}).Host
}

// etcdCheck is the readiness check of etcd: a quorum read answers.
func etcdCheck(client *clientv3.Client) healthz.Check {
	return healthz.Check{Name: "etcd", Fn: func(ctx context.Context) error {
		_, err := client.Get(ctx, "health", clientv3.WithCountOnly())
		return err
	}}
}

// Run runs a server with options o until ctx ends, printing where to find
// it on out.
func Run(ctx context.Context, o *Options, out io.Writer) error {
	start := time.Now()
	s, err := Start(o)
	if err != nil {
		return err
	}
	defer s.Stop()
	if err := s.WaitForReady(ctx); err != nil {
		return nil // interrupted while starting
	}
	slog.Info("miniapiserver is ready", "url", s.SecureURL, "etcd", s.EtcdURL, "startup", time.Since(start).Round(time.Millisecond))
	if s.KubeconfigPath != "" {
		abs, _ := filepath.Abs(s.KubeconfigPath)
		fmt.Fprintf(out, "kubeconfig: %s\n  kubectl --kubeconfig %s get namespaces\n", abs, abs)
	}
	if s.InsecureURL != "" {
		fmt.Fprintf(out, "insecure (no authentication): %s\n", s.InsecureURL)
	}
	select {
	case <-ctx.Done():
		slog.Info("miniapiserver is shutting down")
		return nil
	case err := <-s.Err():
		return err
	}
}

// watchCacheCheck is ready once every resource's store is: each watch
// cache has its first list.
func watchCacheCheck(groups []rest.APIGroupInfo) healthz.Check {
	var checks []func() error
	for _, g := range groups {
		for _, resources := range g.VersionedResourcesStorageMap {
			for _, st := range resources {
				if s, ok := st.(rest.StorageReadinessChecker); ok {
					checks = append(checks, s.StorageReadiness)
				}
			}
		}
	}
	return healthz.Check{Name: "watch-cache", Fn: func(context.Context) error {
		for _, check := range checks {
			if err := check(); err != nil {
				return err
			}
		}
		return nil
	}}
}
