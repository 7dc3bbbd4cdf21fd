package app

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
	admissionwebhook "github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/webhook"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/filters"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/crd"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/endpoints"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/garbagecollector"
	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
	"github.com/miniapiserver/miniapiserver/pkg/registry/admissionregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apps"
	"github.com/miniapiserver/miniapiserver/pkg/registry/authentication"
	authorizationgroup "github.com/miniapiserver/miniapiserver/pkg/registry/authorization"
	"github.com/miniapiserver/miniapiserver/pkg/registry/autoscaling"
	"github.com/miniapiserver/miniapiserver/pkg/registry/batch"
	"github.com/miniapiserver/miniapiserver/pkg/registry/certificates"
	"github.com/miniapiserver/miniapiserver/pkg/registry/coordination"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/discovery"
	eventsgroup "github.com/miniapiserver/miniapiserver/pkg/registry/events"
	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/policy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	resourcegroup "github.com/miniapiserver/miniapiserver/pkg/registry/resource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
	storagegroup "github.com/miniapiserver/miniapiserver/pkg/registry/storage"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storagemigration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhook"
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
	// ClientCA verifies client certificates; it signs new ones unless it
	// came from --client-ca-file.
	ClientCA *ClientCA
	// CAPEM is the certificate clients trust (nil with --tls-cert-file).
	CAPEM []byte
	// KubeconfigPath is the generated admin kubeconfig ("" when the server
	// holds no admin credential: --client-ca-file and --token-auth-file).
	KubeconfigPath string
	// EtcdURL is the etcd the server uses (the embedded one's, or the first
	// of --etcd-servers), and EtcdTLS the TLS client configuration it
	// reaches it with (nil: plain HTTP).
	EtcdURL string
	EtcdTLS *tls.Config
	// EtcdTLSFiles are the client certificate, key and CA of the embedded
	// etcd (zero with --etcd-servers).
	EtcdTLSFiles embedetcd.TLSFiles
	// GarbageCollector is the ownerReference garbage collector, when
	// --controllers runs it (tests wait on its graph, as kube's
	// integration tests do).
	GarbageCollector *garbagecollector.Controller

	readyChecks []healthz.Check
	// shuttingDown fails /readyz from the start of a shutdown.
	shuttingDown  atomic.Bool
	shutdownDelay time.Duration
	// stopEndpoints removes this replica from the kubernetes endpoints
	// (nil: no endpoint reconciler).
	stopEndpoints func()

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
	s := &Server{errs: make(chan error, 2), shutdownDelay: o.ShutdownDelayDuration}
	ok := false
	defer func() {
		if !ok {
			s.runCleanup()
		}
	}()
	clients, err := s.connectEtcd(o)
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
	creds, err := loadCredentials(o)
	if err != nil {
		return nil, err
	}
	s.ClientCA, s.AdminToken = creds.clientCA, creds.adminToken
	reviews := &lateAuthenticator{}
	authorization, err := newAuthorization(o)
	if err != nil {
		return nil, err
	}
	factories, err := newStorageFactories(ctx, o, clients)
	if err != nil {
		return nil, err
	}
	etcdHealth, etcdReady := etcdChecks(o, clients)
	var rootCA []byte // kube-root-ca.crt is published by a controller of kcm's
	if o.controllerEnabled(rootCAPublisherName) {
		rootCA = caPEM
	}
	groups, st, getter, err := buildGroups(o, factories, ProviderDeps{
		RootCA: rootCA, Tokens: creds.tokenIssuer(o), Authenticator: reviews, APIAudiences: o.Auth.apiAudiences(),
		StorageHealth: etcdHealth[0].Fn,
		Authorization: authorization, NoDefaultIngressClass: o.Admission.disabled("DefaultIngressClass"),
	})
	if err != nil {
		return nil, err
	}
	authorization.bindNodeObjects(groups)
	s.cleanup = append(s.cleanup, func() {
		for i := range groups {
			groups[i].Destroy()
		}
	})
	if err := getter.checkResources("--watch-cache-sizes", watchCacheSizeNames(o)); err != nil {
		return nil, err
	}
	if err := getter.checkResources("--etcd-servers-overrides", overriddenNames(o)); err != nil {
		return nil, err
	}
	// The groups built are every group's storage (the wiring uses it);
	// served are the versions --runtime-config leaves on.
	served, err := o.Kube.servedGroups(groups, o.Auth.EnablePriorityAndFairness)
	if err != nil {
		return nil, err
	}
	sec, err := s.buildSecurity(ctx, o, creds, st.core, reviews, authorization.Authorizer)
	if err != nil {
		return nil, err
	}

	secureLn, err := o.Kube.Serving.listen(net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("--secure-port: %w", err)
	}
	s.cleanup = append(s.cleanup, func() { secureLn.Close() })
	s.SecureURL = "https://" + clientAddress(secureLn.Addr().(*net.TCPAddr))
	flowControl := flowControlController(st.flowControl)
	fairness := priorityAndFairness(o, st.flowControl)
	services := webhook.EndpointsResolver{Services: st.core.Services, Endpoints: servedStorage(groups, "", "endpoints").(rest.Getter)}
	webhooks := admissionwebhook.NewSource(services)
	apiServices := apiServiceRegistration(served, st.apiRegistration)
	// The boot sequence's checks fail /healthz and /livez too until they
	// pass, as kube's post-start hooks do: a client that waits for
	// /healthz (envtest does) finds the bootstrap policy in place.
	bootChecks := append(slices.Clip(etcdHealth), rbacReadyCheck(authorization),
		healthz.Check{Name: "poststarthook/priority-and-fairness-config-producer", Fn: func(context.Context) error { return flowControl.Ensured() }},
		healthz.Check{Name: "autoregister-completion", Fn: func(context.Context) error { return apiServices.Ready() }})
	if fairness != nil {
		bootChecks = append(bootChecks, healthz.Check{Name: "poststarthook/priority-and-fairness-filter", Fn: func(context.Context) error { return fairness.Synced() }})
	}
	cacheCheck := watchCacheCheck(groups, o.Kube.Misc.StorageInitializationTimeout)
	s.readyChecks = append(slices.Clip(bootChecks), cacheCheck)
	policies, err := newAdmissionPolicies(groups, st, sec.authorizer)
	if err != nil {
		return nil, err
	}
	admissionChain, err := admissionChain(o, groups, st, sec.authorizer, policies, webhooks)
	if err != nil {
		return nil, err
	}
	cfg := s.apiConfig(o, served, st, sec, creds, admissionChain)
	cfg.OpenAPIPaths = o.Kube.RuntimeConfig.openAPIFilter(groups, served)
	cfg.FlowControl = fairness
	proxy := newAggregator(o, groups, st, creds)
	cfg.Aggregator = proxy
	// An alarm (NOSPACE: etcd refuses writes) fails /readyz, not the wait
	// for the server to start.
	cfg.LivezChecks = bootChecks
	cfg.ReadyzChecks = append(slices.Clip(etcdReady), cacheCheck, s.shutdownCheck())
	o.Kube.Misc.applyProfiling(o.Profiling)
	api, err := apiserver.New(cfg)
	if err != nil {
		return nil, err
	}
	// From here on goroutines run: a start that fails stops them before
	// the storage they use is destroyed.
	s.cleanup = append(s.cleanup, func() { cancel(); s.wg.Wait() })
	// The bootstrap policy and the flow control configuration are written
	// in the background, meanwhile: /healthz waits for them.
	s.startRBAC(ctx, authorization, st.rbac, o.controllerEnabled(clusterRoleAggregationName))
	if r := authorization.reloader; r != nil {
		s.goUntilDone(func() { r.run(ctx) })
	}
	if r := sec.authnReloader; r != nil {
		s.goUntilDone(func() { r.run(ctx) })
	}
	s.goUntilDone(func() { flowControl.Run(ctx) })
	if fairness != nil {
		s.goUntilDone(func() { fairness.Run(ctx) })
	}
	serviceCIDRs, err := writeBootstrapObjects(ctx, o, st, creds.extensionAuthData(o), secureLn.Addr().(*net.TCPAddr).Port)
	if err != nil {
		return nil, err
	}
	var reconciler *endpoints.Reconciler
	if o.EndpointReconcilerType != "none" {
		if reconciler, err = endpointReconciler(o, groups, secureLn.Addr().(*net.TCPAddr).Port); err != nil {
			return nil, err
		}
	}
	tlsConfig := &tls.Config{
		Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12,
		// Client certificates are asked for, not required: the
		// authenticator verifies them, other requests use tokens.
		ClientAuth: tls.RequestClientCert, ClientCAs: creds.clientCA.Pool,
	}
	o.Kube.Serving.apply(tlsConfig)
	s.serve(ctx, secureLn, api.SecureHandler(), tlsConfig, o.serveOptions())
	if o.InsecurePort != 0 {
		insecureLn, err := net.Listen("tcp", net.JoinHostPort(o.InsecureBindAddr, strconv.Itoa(o.InsecurePort)))
		if err != nil {
			return nil, fmt.Errorf("--insecure-port: %w", err)
		}
		s.InsecureURL = "http://" + clientAddress(insecureLn.Addr().(*net.TCPAddr))
		s.serve(ctx, insecureLn, api.InsecureHandler(), nil, o.serveOptions())
	}
	admin := adminCredentials{CertPEM: creds.adminCert, KeyPEM: creds.adminKey, Token: creds.adminToken}
	if admin.CertPEM != nil || admin.Token != "" {
		s.KubeconfigPath = filepath.Join(o.DataDir, "kubeconfig")
		if err := writeKubeconfig(s.KubeconfigPath, s.SecureURL, caPEM, admin); err != nil {
			return nil, fmt.Errorf("--data-dir: writing the kubeconfig: %w", err)
		}
	}
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		policies.run(ctx)
	}()
	// Each etcd's history is compacted, as kube compacts each server
	// list's; only the main etcd is defragmented (an override's is an
	// external etcd, its operator's to defragment).
	for _, c := range clients.all() {
		s.goUntilDone(func() { etcd3.RunCompactor(ctx, c, o.EtcdCompactionInterval) })
	}
	go func() {
		defer s.wg.Done()
		etcd3.RunMaintenance(ctx, clients.main, etcd3.MaintenanceConfig{Interval: o.EtcdDefragInterval, DefragThreshold: o.EtcdDefragThreshold})
	}()
	go func() {
		defer s.wg.Done()
		serviceCIDRs.Run(ctx)
	}()
	if o.ServiceNodePortRepairInterval > 0 {
		st.core.ServiceRepair.PortInterval = o.ServiceNodePortRepairInterval
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		st.core.ServiceRepair.Run(ctx)
	}()
	if reconciler != nil { // nil: --endpoint-reconciler-type=none, or no address to list
		// Stopped first when the server stops (kube's pre-shutdown hook):
		// the endpoints stop listing this replica while it still serves.
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		s.stopEndpoints = func() { stop(); <-done }
		go func() {
			defer close(done)
			reconciler.Run(rctx)
		}()
	}
	crdController := crd.New(crd.Config{
		Definitions: st.apiextensions.CustomResourceDefinitions, Status: st.apiextensions.Status,
		Server: api, Storage: customResourceOptions{getter},
		Services: services, APIServices: apiServices,
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		webhooks.Run(ctx, api, servedStorage(groups, admissionregistrationv1.GroupName, "mutatingwebhookconfigurations").(admissionwebhook.Configurations),
			servedStorage(groups, admissionregistrationv1.GroupName, "validatingwebhookconfigurations").(admissionwebhook.Configurations))
	}()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		crdController.Run(ctx)
	}()
	go func() {
		defer s.wg.Done()
		// As kube's: the APIServices of custom resources left from an
		// earlier run are kept, not deleted, until the definitions
		// have been listed and registered them again.
		select {
		case <-ctx.Done():
			return
		case <-crdController.Listed():
		}
		apiServices.Run(ctx)
	}()
	availability := availabilityController(groups, st, proxy, api)
	s.goUntilDone(func() { availability.Run(ctx) })
	if o.controllerEnabled(namespaceControllerName) {
		nc := namespaceController(groups, st.core.Namespaces, st.core.NamespaceFinalize, crdController)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			nc.Run(ctx)
		}()
	}
	if o.controllerEnabled(garbageCollectorName) {
		gc := garbageCollector(groups, crdController)
		s.GarbageCollector = gc
		s.goUntilDone(func() { gc.Run(ctx) })
	}
	ok = true
	return s, nil
}

// apiConfig is the configuration of the HTTP side: the groups, the
// filters' parts, admission and timeouts (Start adds the readiness
// checks).
func (s *Server) apiConfig(o *Options, groups []rest.APIGroupInfo, st groupStorages, sec *security, creds *credentials,
	admissionChain admission.Chain) apiserver.Config {
	return apiserver.Config{
		APIGroups:     groups,
		Authenticator: sec.authenticator,
		APIAudiences:  o.Auth.apiAudiences(),
		Authorizer:    sec.authorizer,
		InFlight: filters.InFlightConfig{
			ReadOnly: o.Auth.MaxRequestsInflight, Mutating: o.Auth.MaxMutatingRequestsInflight,
			QueueLength: inFlightQueueLength, MaxWait: o.RequestTimeout / 4,
		},
		AuditPolicy:       sec.auditPolicy,
		AuditSink:         auditSink(sec.auditLog),
		NonResource:       discoveryHandlers(creds.discovery(o, s.SecureURL)),
		Admission:         admissionChain,
		MinRequestTimeout: cmp.Or(o.MinRequestTimeout, -1), // 0: none
		RequestTimeout:    o.RequestTimeout,
		GoawayChance:      o.Kube.GoawayChance,
		Version:           Version(),
		EnableProfiling:   o.Profiling,
	}
}

// embeddedEtcdDir is where the embedded etcd of a data dir keeps its data.
func embeddedEtcdDir(dataDir string) string { return filepath.Join(dataDir, "etcd") }

// ProviderDeps are what some API groups need of the server beyond its
// options.
type ProviderDeps struct {
	// RootCA is the PEM published in every namespace (nil: none).
	RootCA []byte
	// Tokens serves the TokenRequest API (nil: not served).
	Tokens *core.TokenIssuer
	// Authenticator reviews TokenReviews; APIAudiences are its default
	// audiences.
	Authenticator authenticator.Request
	APIAudiences  []string
	// StorageHealth checks etcd for componentstatuses (nil: not listed).
	StorageHealth func(context.Context) error
	// Authorization answers the access and rules reviews, and is asked
	// whether a writer of roles may escalate or bind (nil: a provider only
	// inspected, as by the OpenAPI generator).
	Authorization *Authorization
	// NoDefaultIngressClass turns off DefaultIngressClass
	// (--disable-admission-plugins), which networking.k8s.io applies.
	NoDefaultIngressClass bool
}

// RESTStorageProviders are the providers of every served API group, in
// the order discovery lists them, configured from o and deps. The OpenAPI
// generator (hack/openapi-gen) builds its groups from the same list.
func RESTStorageProviders(o *Options, deps ProviderDeps) ([]generic.RESTStorageProvider, error) {
	links := newGroupLinks()
	coreProvider, err := coreStorageProvider(o, deps, links)
	if err != nil {
		return nil, err
	}
	return append([]generic.RESTStorageProvider{coreProvider}, groupStorageProviders(deps, links)...), nil
}

// groupLinks are what one group's provider hands another, filled as the
// groups are built: core's events store (events.k8s.io serves it too),
// policy's disruption budgets (core's pods/eviction honours them) and
// core's namespaces (resource.k8s.io's admin-access check reads them)
// and discovery.k8s.io's EndpointSlices (core's services/proxy reads them).
type groupLinks struct {
	events     *generic.StoreRef
	budgets    *policy.Budgets
	namespaces *resourcegroup.NamespaceRef
	// endpointSlices: discovery.k8s.io's, where core's services/proxy
	// finds a service's endpoints.
	endpointSlices *generic.StoreRef
}

func newGroupLinks() groupLinks {
	return groupLinks{events: &generic.StoreRef{}, budgets: &policy.Budgets{}, namespaces: &resourcegroup.NamespaceRef{},
		endpointSlices: &generic.StoreRef{}}
}

// coreStorageProvider is the provider of the core group, configured from o
// and deps. It hands its events store to events.k8s.io; its evictions
// honour policy's budgets.
func coreStorageProvider(o *Options, deps ProviderDeps, links groupLinks) (core.RESTStorageProvider, error) {
	serviceRanges, err := o.serviceClusterIPRanges()
	if err != nil {
		return core.RESTStorageProvider{}, err
	}
	var secondary netip.Prefix
	if len(serviceRanges) == 2 {
		secondary = serviceRanges[1]
	}
	components := core.KubeComponentChecks()
	if deps.StorageHealth != nil {
		// kube names its storage backends etcd-0, etcd-1...; this server has one.
		components["etcd-0"] = core.StorageComponentCheck(deps.StorageHealth)
	}
	return core.RESTStorageProvider{
		ServiceClusterIPRange:          serviceRanges[0],
		SecondaryServiceClusterIPRange: secondary,
		ServiceNodePortRange:           o.Kube.ServiceNodePortRange,
		EventTTL:                       o.EventTTL,
		RootCA:                         deps.RootCA,
		DefaultServiceAccounts:         o.controllerEnabled(serviceAccountControllerName),
		Tokens:                         deps.Tokens,
		Events:                         links.events,
		DisruptionBudgets:              links.budgets,
		Kubelet:                        o.Kubelet.config(),
		EndpointSlices:                 links.endpointSlices,
		Components:                     components,
	}, nil
}

// groupStorageProviders are the providers of the named groups, in the
// order discovery lists them (after the core group), linked as links say.
func groupStorageProviders(deps ProviderDeps, links groupLinks) []generic.RESTStorageProvider {
	authorization := deps.Authorization
	if authorization == nil {
		authorization = &Authorization{}
	}
	return []generic.RESTStorageProvider{
		apiregistration.RESTStorageProvider{},
		apps.RESTStorageProvider{},
		eventsgroup.RESTStorageProvider{Events: links.events},
		authentication.RESTStorageProvider{Authenticator: deps.Authenticator, APIAudiences: deps.APIAudiences},
		authorizationgroup.RESTStorageProvider{Authorizer: authorization.Authorizer, RuleResolver: authorization.RuleResolver},
		autoscaling.RESTStorageProvider{},
		batch.RESTStorageProvider{},
		certificates.RESTStorageProvider{},
		networking.RESTStorageProvider{NoDefaultIngressClass: deps.NoDefaultIngressClass},
		policy.RESTStorageProvider{Budgets: links.budgets},
		rbac.RESTStorageProvider{Authorizer: authorization.Authorizer, Policy: authorization.Policy},
		storagegroup.RESTStorageProvider{},
		admissionregistration.RESTStorageProvider{},
		apiextensions.RESTStorageProvider{},
		scheduling.RESTStorageProvider{},
		coordination.RESTStorageProvider{},
		node.RESTStorageProvider{},
		discovery.RESTStorageProvider{EndpointSlices: links.endpointSlices},
		resourcegroup.RESTStorageProvider{Namespaces: links.namespaces},
		flowcontrol.RESTStorageProvider{},
		storagemigration.RESTStorageProvider{},
	}
}

// buildGroups builds the storage of every API group, and returns the
// typed handles of those parts of it that the rest of the wiring uses.
// The core group is built between two kinds of named groups: those whose
// stores its hooks read (kube's Priority, RuntimeClass and
// DefaultStorageClass admission of new pods and claims) come before it,
// the others after it (events.k8s.io serves its events store; policy fills
// the budgets core's evictions read, through links).
func buildGroups(o *Options, factories storageFactories, deps ProviderDeps) ([]rest.APIGroupInfo, groupStorages, *restOptionsGetter, error) {
	links := newGroupLinks()
	coreProvider, err := coreStorageProvider(o, deps, links)
	if err != nil {
		return nil, groupStorages{}, nil, err
	}
	getter := &restOptionsGetter{
		factories:   factories,
		prefix:      o.EtcdPrefix,
		countPeriod: o.EtcdClient.CountMetricPollPeriod,
		seen:        map[string]bool{},
		decorator:   decoratorFor(o),
	}
	providers := groupStorageProviders(deps, links)
	// groups[0] is the core group's, groups[1+i] that of providers[i].
	groups := make([]rest.APIGroupInfo, 1+len(providers))
	fail := func(err error) ([]rest.APIGroupInfo, groupStorages, *restOptionsGetter, error) {
		for i := range groups {
			groups[i].Destroy()
		}
		return nil, groupStorages{}, nil, err
	}
	var st groupStorages
	buildNamed := func(beforeCore bool) error {
		for i, p := range providers {
			if readByCore(p) != beforeCore {
				continue
			}
			info, err := st.build(p, getter)
			if err != nil {
				return fmt.Errorf("building the %q API group: %w", p.GroupName(), err)
			}
			groups[1+i] = info
		}
		return nil
	}
	if err := buildNamed(true); err != nil {
		return fail(err)
	}
	// The mutating halves of kube's plugins of new pods, unless the flags
	// turn them off (their validating halves are in apiConfig's chain).
	if !o.Admission.disabled("Priority") {
		coreProvider.PodPriority = scheduling.PodPriority{Classes: st.scheduling.PriorityClasses}
	}
	if !o.Admission.disabled("RuntimeClass") {
		coreProvider.PodRuntimeClass = node.PodRuntimeClass{Classes: st.node.RuntimeClasses}
	}
	coreProvider.NoPodServiceAccount = o.Admission.disabled("ServiceAccount")
	coreProvider.NoPodTolerations = o.Admission.disabled("DefaultTolerationSeconds")
	coreProvider.NoPodTopologyLabels = o.Admission.disabled("PodTopologyLabels")
	coreProvider.NoPodLimitRanges = o.Admission.disabled("LimitRanger")
	coreProvider.PodTolerations = &core.DefaultTolerationSeconds{
		NotReady: o.Admission.NotReadyTolerationSeconds, Unreachable: o.Admission.UnreachableTolerationSeconds}
	if !o.Admission.disabled("DefaultStorageClass") {
		coreProvider.ClaimStorageClass = storagegroup.ClaimDefaulter{Classes: st.storage.StorageClasses}
	}
	if st.core, groups[0], err = coreProvider.NewLegacyRESTStorage(getter); err != nil {
		return fail(fmt.Errorf("building the core API group: %w", err))
	}
	links.namespaces.Getter = st.core.Namespaces
	if err := buildNamed(false); err != nil {
		return fail(err)
	}
	return groups, st, getter, nil
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
func (s *Server) serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConfig *tls.Config, opts apiserver.ServeOptions) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := apiserver.Serve(ctx, ln, h, tlsConfig, opts); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- fmt.Errorf("serving on %s: %w", ln.Addr(), err)
			s.cancel()
		}
	}()
}

// Stop shuts the server down gracefully, as kube-apiserver does: /readyz
// fails at once while every request is still served for the shutdown
// delay; then the server stops accepting requests, watches end (their
// streams closed cleanly, so clients watch again elsewhere) and the
// requests in flight get the shutdown timeout to finish. The storage, the
// etcd client and the embedded etcd are released last, in that order.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.shuttingDown.Store(true)
		if s.stopEndpoints != nil {
			s.stopEndpoints()
		}
		if s.shutdownDelay > 0 {
			slog.Info("miniapiserver: /readyz fails; serving on for the shutdown delay", "delay", s.shutdownDelay)
			time.Sleep(s.shutdownDelay)
		}
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

// shutdownCheck fails from the start of a shutdown, as kube's "shutdown".
func (s *Server) shutdownCheck() healthz.Check {
	return healthz.Check{Name: "shutdown", Fn: func(context.Context) error {
		if s.shuttingDown.Load() {
			return errors.New("the server is shutting down")
		}
		return nil
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
	// Starting allocates several times the heap that stays live (package
	// initialisers, schemas (on a fresh cluster the managedFields type
	// converter's: 12 MiB read for 2 kept), the first list of every
	// watch cache): give the garbage back to the system now rather than
	// hold it as idle heap until the scavenger gets to it (~4 MiB of idle
	// RSS, and that memory is private to each instance).
	debug.FreeOSMemory()
	slog.Info("miniapiserver is ready", "url", s.SecureURL, "etcd", s.EtcdURL, "startup", time.Since(start).Round(time.Millisecond))
	if s.KubeconfigPath != "" {
		abs, _ := filepath.Abs(s.KubeconfigPath)
		fmt.Fprintf(out, "kubeconfig: %s\n  kubectl --kubeconfig %s get namespaces\n", abs, abs)
	}
	if f := s.EtcdTLSFiles; f != (embedetcd.TLSFiles{}) {
		// The embedded etcd takes only clients with its certificate.
		fmt.Fprintf(out, "etcd: %s\n  etcdctl --endpoints %s --cacert %s --cert %s --key %s endpoint status\n",
			s.EtcdURL, s.EtcdURL, absPath(f.CAFile), absPath(f.CertFile), absPath(f.KeyFile))
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

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
