package apiserver

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/filters"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// SecureHandler serves the secure port: every request is authenticated
// (or anonymous), audited, maybe impersonating, limited and authorized.
func (s *Server) SecureHandler() http.Handler {
	failed := filters.WithFailedAuthenticationAudit(http.HandlerFunc(filters.Unauthorized), s.auditPolicy, s.auditSink)
	return s.chain(func(h http.Handler) http.Handler {
		return filters.WithAuthentication(h, s.authenticator, failed, s.apiAudiences)
	})
}

// unsecuredUser is the user of every request of the insecure port.
var unsecuredUser = &user.DefaultInfo{Name: "system:unsecured", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// InsecureHandler serves every request as an administrator: for the
// loopback-only --insecure-port.
func (s *Server) InsecureHandler() http.Handler {
	return s.chain(func(h http.Handler) http.Handler { return filters.WithUser(h, unsecuredUser) })
}

// chain wraps the routes in the filters, in kube-apiserver's order (the
// first listed runs first):
//
//	audit ID -> panic recovery -> request info -> cache control ->
//	goaway (--goaway-chance) -> warnings -> request deadline -> authentication -> audit ->
//	impersonation -> priority and fairness (or the plain in-flight
//	limits) -> authorization -> routes
//
// Audit events start after authentication, as kube's do, so that they
// name the user; the audit ID and arrival time are set first.
func (s *Server) chain(authenticate func(http.Handler) http.Handler) http.Handler {
	h := filters.WithAuthorization(s.routes, s.authorizer)
	if s.flowControl != nil {
		h = apf.WithPriorityAndFairness(h, s.flowControl, s.resourceStats)
	} else {
		h = filters.WithMaxInFlight(h, s.inFlight, s.inFlightMetrics)
	}
	h = filters.WithImpersonation(h, s.authorizer)
	h = filters.WithAudit(h, s.auditPolicy, s.auditSink)
	h = authenticate(h)
	h = filters.WithRequestDeadline(h, s.requestTimeout)
	h = filters.WithWarnings(h)
	h = filters.WithProbabilisticGoaway(h, s.goawayChance)
	h = filters.WithCacheControl(h)
	h = filters.WithRequestInfo(h)
	h = filters.WithPanicRecovery(h)
	return filters.WithAuditInit(h, s.auditMetrics)
}

// resourceStats finds what the store of a built-in or custom resource
// knows of its objects and watches (API Priority and Fairness's work
// estimates).
func (s *Server) resourceStats(group, resource string) (st storage.Stats, found, ok bool) {
	k := versionKey{group, resource, ""}
	endpoints := s.builtinVersions[k]
	if len(endpoints) == 0 {
		if custom := s.customResources.versions.Load(); custom != nil {
			endpoints = (*custom)[k]
		}
	}
	if len(endpoints) == 0 {
		return storage.Stats{}, false, false
	}
	r, isReporter := endpoints[0].Storage.(storage.StatsReporter)
	if !isReporter {
		return storage.Stats{}, true, false
	}
	st, ok = r.Stats()
	return st, true, ok
}
