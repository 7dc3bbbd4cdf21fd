// Package apiserver is the HTTP side of miniapiserver: it mounts the chi
// routes of every API group from the registry's APIGroupInfos, serves
// discovery, the OpenAPI documents, health, version and metrics, and wraps
// it all in the filters, in kube's order (see chain.go).
//
// Layers: cmd -> apiserver -> registry -> storage. It uses storage's types
// only, never etcd3 or the cacher.
package apiserver

import (
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	apiopenapi "github.com/miniapiserver/miniapiserver/api/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/filters"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/metrics"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Config of a Server.
type Config struct {
	// APIGroups are the groups served, built by the RESTStorageProviders.
	APIGroups []rest.APIGroupInfo
	// Authenticator identifies the users of the secure port (certificates,
	// tokens, anonymous); APIAudiences are the audiences of this API.
	Authenticator authenticator.Request
	APIAudiences  authenticator.Audiences
	// Authorizer decides what each user may do (nil: everything).
	Authorizer authorizer.Authorizer
	// InFlight limits the requests running at once when FlowControl is
	// nil.
	InFlight filters.InFlightConfig
	// FlowControl is API Priority and Fairness, in place of the plain
	// in-flight limits (nil: off); it serves its dumps under
	// /debug/api_priority_and_fairness/.
	FlowControl *apf.Controller
	// AuditPolicy and AuditSink record requests (nil: no audit).
	AuditPolicy *audit.Policy
	AuditSink   audit.Sink
	// AuditMetrics count the audit events; created on Metrics, they are
	// shared with the server's audit backend (nil: created here).
	AuditMetrics *audit.Metrics
	// NonResource are extra paths served to whom the authorizer allows
	// (the service account issuer's OpenID documents).
	NonResource map[string]http.Handler
	// Admission validates writes (nil: admit all).
	Admission handlers.Admission
	// LivezChecks and ReadyzChecks are added to ping.
	LivezChecks  []healthz.Check
	ReadyzChecks []healthz.Check
	// MinRequestTimeout is the base of a watch's default timeout (0: 30
	// min; negative: none), as handlers.Scope's.
	MinRequestTimeout time.Duration
	// RequestTimeout bounds every request but the long-running ones (0:
	// none).
	RequestTimeout time.Duration
	// Version is served at /version.
	Version version.Info
	// EnableProfiling serves /debug/pprof.
	EnableProfiling bool
	// OpenAPIPaths are the API paths the OpenAPI documents list (nil:
	// every one generated), as --runtime-config leaves them.
	OpenAPIPaths openapi.PathFilter
	// GoawayChance is the share of HTTP/2 requests whose connection is
	// closed after them (0: none), as kube's --goaway-chance.
	GoawayChance float64
	// Aggregator proxies the group versions of extension API servers
	// (nil: none, and ServeAPIServices fails).
	Aggregator *aggregator.Proxy
	// Metrics is the server's metrics registry: the server's request,
	// in-flight and watch metrics are created on it, and /metrics serves
	// it with the process's collectors (nil: a new one).
	Metrics *prometheus.Registry
}

// Server routes every request of the API.
type Server struct {
	admission         handlers.Admission
	minRequestTimeout time.Duration
	requestTimeout    time.Duration
	goawayChance      float64
	routes            http.Handler
	authenticator     authenticator.Request
	apiAudiences      authenticator.Audiences
	authorizer        authorizer.Authorizer
	inFlight          filters.InFlightConfig
	flowControl       *apf.Controller
	auditPolicy       *audit.Policy
	auditSink         audit.Sink
	// discovery holds the documents of the built-in groups and of the
	// custom resources served; builtinGVs are the former, which every
	// rebuild of the documents starts from.
	discovery  atomic.Pointer[discovery.Documents]
	builtinGVs []*discovery.GroupVersion
	// builtinGroups are the groups of builtinGVs.
	builtinGroups map[string]bool
	// builtinVersions are the built-in endpoints by resource.
	builtinVersions resourceVersions
	// builtinShared are the built-in endpoints by what they store.
	builtinShared map[storageKey][]*Endpoint
	// customResources are the groups and routes of custom resources.
	customResources customResources
	// openapi serves the OpenAPI documents.
	openapi *openapi.Service
	// apiMajor and apiMinor are the served Kubernetes version, against
	// which kinds are deprecated.
	apiMajor, apiMinor int
	// aggregator proxies the group versions of extension API servers;
	// remote are the APIServices last given to ServeAPIServices
	// (customResources.mu guards it).
	aggregator *aggregator.Proxy
	remote     []aggregator.Remote
	// The server's metrics, created on Config.Metrics.
	requestMetrics  *requestMetrics
	inFlightMetrics *filters.Metrics
	handlerMetrics  *handlers.Metrics
	auditMetrics    *audit.Metrics
}

// New installs the routes of cfg's groups.
func New(cfg Config) (*Server, error) {
	s := &Server{admission: cfg.Admission, minRequestTimeout: cfg.MinRequestTimeout, requestTimeout: cfg.RequestTimeout,
		authenticator: cfg.Authenticator, apiAudiences: cfg.APIAudiences, authorizer: cfg.Authorizer,
		inFlight: cfg.InFlight, flowControl: cfg.FlowControl, auditPolicy: cfg.AuditPolicy, auditSink: cfg.AuditSink, aggregator: cfg.Aggregator,
		goawayChance: cfg.GoawayChance}
	reg := cfg.Metrics
	if reg == nil {
		reg = metrics.New()
	}
	s.requestMetrics = newRequestMetrics(reg)
	s.inFlightMetrics = filters.NewMetrics(reg)
	s.handlerMetrics = handlers.NewMetrics(reg)
	if s.auditMetrics = cfg.AuditMetrics; s.auditMetrics == nil {
		s.auditMetrics = audit.NewMetrics(reg)
	}
	if s.authorizer == nil {
		s.authorizer = authz.New(authz.Named{Name: authz.ModeAlwaysAllow.Name(), Authorizer: authz.AlwaysAllow{}})
	}
	handlers.LimitJSONPatchCopies()
	s.apiMajor, _ = strconv.Atoi(cfg.Version.Major)
	s.apiMinor, _ = strconv.Atoi(strings.TrimRight(cfg.Version.Minor, "+"))
	r := chi.NewRouter()
	r.MethodNotAllowed(handlers.MethodNotAllowed)

	gvs, err := s.installAPIGroups(r, cfg.APIGroups)
	if err != nil {
		return nil, err
	}
	s.builtinGroups = map[string]bool{}
	for _, gv := range gvs {
		s.builtinGroups[gv.Group] = true
	}
	s.builtinGVs = gvs
	r.NotFound(s.serveUnrouted)
	discoveryDocs, err := discovery.New(gvs)
	if err != nil {
		return nil, err
	}
	s.discovery.Store(discoveryDocs)
	s.installDiscovery(r)
	if s.openapi, err = openapi.New(apiopenapi.FS(), cfg.OpenAPIPaths); err != nil {
		return nil, err
	}
	s.openapi.Install(r)

	healthz.Install(r, "/healthz", append([]healthz.Check{healthz.PingCheck}, cfg.LivezChecks...)...)
	healthz.Install(r, "/livez", append([]healthz.Check{healthz.PingCheck}, cfg.LivezChecks...)...)
	healthz.Install(r, "/readyz", append(append([]healthz.Check{healthz.PingCheck}, cfg.LivezChecks...), cfg.ReadyzChecks...)...)
	info := cfg.Version
	r.Get("/version", func(w http.ResponseWriter, r *http.Request) {
		if err := negotiation.CheckAccept(r, negotiation.ProducesJSON); err != nil {
			handlers.WriteError(w, r, err)
			return
		}
		handlers.WriteRawJSON(w, http.StatusOK, &info)
	})
	r.Handle("/metrics", metrics.Handler(reg))
	for path, h := range cfg.NonResource {
		r.Handle(path, h)
	}
	if cfg.FlowControl != nil {
		for path, h := range cfg.FlowControl.DebugHandlers() {
			r.Get(path, h)
		}
	}
	if cfg.EnableProfiling {
		r.HandleFunc("/debug/pprof/*", pprof.Index)
		r.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		r.HandleFunc("/debug/pprof/profile", pprof.Profile)
		r.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		r.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s.routes = s.withAggregator(r)
	return s, nil
}

func (s *Server) installDiscovery(r chi.Router) {
	// /api and the group versions are routes of kube's router, which
	// checks Accept before the handler; /apis and /apis/GROUP are not.
	r.Get("/api", func(w http.ResponseWriter, r *http.Request) {
		docs := s.discovery.Load()
		if !discovery.ServeAggregated(w, r, docs.AggregatedLegacy()) {
			s.writeDiscovery(w, r, true, docs.APIVersions(r))
		}
	})
	r.Get("/apis", func(w http.ResponseWriter, r *http.Request) {
		docs := s.discovery.Load()
		if !discovery.ServeAggregated(w, r, docs.AggregatedGroups()) {
			s.writeDiscovery(w, r, false, docs.APIGroupList())
		}
	})
	// kube's aggregator serves "/apis/" apart from "/apis": the same
	// group list, never aggregated (kube-aggregator's apiserver.go
	// registers apisHandler there without the aggregated discovery
	// wrapper).
	r.Get("/apis/", func(w http.ResponseWriter, r *http.Request) {
		s.writeDiscovery(w, r, false, s.discovery.Load().APIGroupList())
	})
	r.Get("/api/{version}", func(w http.ResponseWriter, r *http.Request) {
		s.writeDiscovery(w, r, true, s.discovery.Load().APIResourceList("", chi.URLParam(r, "version")))
	})
	r.Get("/apis/{group}", func(w http.ResponseWriter, r *http.Request) {
		s.writeDiscovery(w, r, false, s.discovery.Load().APIGroup(chi.URLParam(r, "group")))
	})
	r.Get("/apis/{group}/{version}", func(w http.ResponseWriter, r *http.Request) {
		group := chi.URLParam(r, "group")
		// kube's router checks the Accept of a built-in group version;
		// the CRD handler serves the others.
		s.writeDiscovery(w, r, s.builtinGroups[group], s.discovery.Load().APIResourceList(group, chi.URLParam(r, "version")))
	})
}

func (s *Server) writeDiscovery(w http.ResponseWriter, r *http.Request, routed bool, obj runtime.Object) {
	if obj == nil {
		s.notFound(w, r)
		return
	}
	if routed {
		if err := negotiation.CheckAccept(r, negotiation.ProducesResource); err != nil {
			handlers.WriteError(w, r, err)
			return
		}
	}
	out, err := negotiation.NegotiateOutput(r)
	if err != nil {
		handlers.WriteError(w, r, err)
		return
	}
	handlers.WriteObject(w, r, out, http.StatusOK, obj)
}

// serveUnrouted serves what no route of the router matches: a path kube
// serves without its trailing slashes, the custom resources, else a 404.
func (s *Server) serveUnrouted(w http.ResponseWriter, r *http.Request) {
	if s.serveTrimmed(w, r) {
		return
	}
	if !s.customResources.serve(w, r) {
		s.notFound(w, r)
	}
}

// notFound answers a path nothing serves: under /api and the served
// groups with a Status, elsewhere with Go's plain text 404, as kube does.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") {
		handlers.NotFound(w, r)
		return
	}
	if rest, ok := strings.CutPrefix(p, "/apis/"); ok {
		group, _, _ := strings.Cut(rest, "/")
		if group != "" && (s.builtinGroups[group] || s.customResources.servesGroup(group) || s.servesRemoteGroup(group)) {
			handlers.NotFound(w, r)
			return
		}
	}
	http.NotFound(w, r)
}
