package app

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/filters"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/apfconfig"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/autoregister"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// builtHandler is the server's HTTP side: the API server, the listener of
// its secure port, what its filters decide with, and the controllers its
// health checks wait for (their loops run with the server's).
type builtHandler struct {
	api      *apiserver.Server
	secureLn net.Listener
	sec      *security
	// flowControl keeps kube's flow control configuration; fairness is
	// API Priority and Fairness (nil: off).
	flowControl *apfconfig.Controller
	fairness    *apf.Controller
	// apiServices keeps the Local APIServices, proxy reaches the others.
	apiServices *autoregister.Controller
	proxy       *aggregator.Proxy
}

// securePort is the port the secure listener listens on.
func (h *builtHandler) securePort() int { return h.secureLn.Addr().(*net.TCPAddr).Port }

// buildHandler is the part of Start that builds the HTTP side: the
// filters' authenticator and audit, the secure listener (the documents
// served name its address), the API server over the served groups.
func (s *Server) buildHandler(o *Options, creds *credentials, b *builtStorage, g *builtGroups, adm *builtAdmission) (*builtHandler, error) {
	st := g.stores
	sec, err := s.buildSecurity(s.loops.ctx, o, creds, st.core, g.reviews, g.authorization.Authorizer)
	if err != nil {
		return nil, err
	}
	secureLn, err := o.Kube.Serving.listen(net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("--secure-port: %w", err)
	}
	s.cleanup = append(s.cleanup, func() { secureLn.Close() })
	s.SecureURL = "https://" + clientAddress(secureLn.Addr().(*net.TCPAddr))
	h := &builtHandler{
		secureLn: secureLn, sec: sec,
		flowControl: flowControlController(st.flowControl), fairness: priorityAndFairness(o, st.flowControl, s.metrics),
		apiServices: apiServiceRegistration(g.served, st.apiRegistration), proxy: newAggregator(o, st, creds),
	}
	cfg := s.apiConfig(o, g.served, sec, creds, adm.chain)
	cfg.OpenAPIPaths = o.Kube.RuntimeConfig.openAPIFilter(st.groups, g.served)
	cfg.FlowControl = h.fairness
	cfg.Aggregator = h.proxy
	cfg.Metrics = s.metrics
	cfg.LivezChecks, cfg.ReadyzChecks = s.healthChecks(o, b, g, h)
	o.Kube.Misc.applyProfiling(o.Profiling)
	if h.api, err = apiserver.New(cfg); err != nil {
		return nil, err
	}
	// Owner references name kinds, built-in or custom, that only the
	// routes map to resources.
	adm.ownerReferences.Mapper = h.api
	return h, nil
}

// healthChecks are the checks of /livez (and /healthz) and of /readyz;
// WaitForReady waits for the boot sequence's and the watch caches'.
func (s *Server) healthChecks(o *Options, b *builtStorage, g *builtGroups, h *builtHandler) (live, ready []healthz.Check) {
	// The boot sequence's checks fail /healthz and /livez too until they
	// pass, as kube's post-start hooks do: a client that waits for
	// /healthz (envtest does) finds the bootstrap policy in place.
	boot := append(slices.Clip(b.etcdHealth), rbacReadyCheck(g.authorization),
		healthz.Check{Name: "poststarthook/priority-and-fairness-config-producer", Fn: func(context.Context) error { return h.flowControl.Ensured() }},
		healthz.Check{Name: "autoregister-completion", Fn: func(context.Context) error { return h.apiServices.Ready() }})
	if h.fairness != nil {
		boot = append(boot, healthz.Check{Name: "poststarthook/priority-and-fairness-filter", Fn: func(context.Context) error { return h.fairness.Synced() }})
	}
	cacheCheck := watchCacheCheck(g.stores.groups, o.Kube.Misc.StorageInitializationTimeout)
	s.readyChecks = append(slices.Clip(boot), cacheCheck)
	// An alarm (NOSPACE: etcd refuses writes) fails /readyz, not the wait
	// for the server to start.
	return boot, append(slices.Clip(b.etcdReady), cacheCheck, s.shutdownCheck())
}

// apiConfig is the configuration of the HTTP side: the groups, the
// filters' parts, admission and timeouts (buildHandler adds the rest).
func (s *Server) apiConfig(o *Options, served []rest.APIGroupInfo, sec *security, creds *credentials,
	admissionChain admission.Chain) apiserver.Config {
	return apiserver.Config{
		APIGroups:     served,
		Authenticator: sec.authenticator,
		APIAudiences:  o.Auth.apiAudiences(),
		Authorizer:    sec.authorizer,
		InFlight: filters.InFlightConfig{
			ReadOnly: o.Auth.MaxRequestsInflight, Mutating: o.Auth.MaxMutatingRequestsInflight,
			QueueLength: inFlightQueueLength, MaxWait: o.RequestTimeout / 4,
		},
		AuditPolicy:       sec.auditPolicy,
		AuditSink:         auditSink(sec.auditLog),
		AuditMetrics:      sec.auditMetrics,
		NonResource:       discoveryHandlers(creds.discovery(o, s.SecureURL)),
		Admission:         admissionChain,
		MinRequestTimeout: cmp.Or(o.MinRequestTimeout, -1), // 0: none
		RequestTimeout:    o.RequestTimeout,
		GoawayChance:      o.Kube.GoawayChance,
		Version:           Version(),
		EnableProfiling:   o.Profiling,
	}
}
