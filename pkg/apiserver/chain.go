package apiserver

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/filters"
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
//	impersonation -> in-flight limits -> authorization -> routes
//
// Audit events start after authentication, as kube's do, so that they
// name the user; the audit ID and arrival time are set first.
func (s *Server) chain(authenticate func(http.Handler) http.Handler) http.Handler {
	h := filters.WithAuthorization(s.routes, s.authorizer)
	h = filters.WithMaxInFlight(h, s.inFlight)
	h = filters.WithImpersonation(h, s.authorizer)
	h = filters.WithAudit(h, s.auditPolicy, s.auditSink)
	h = authenticate(h)
	h = filters.WithRequestDeadline(h, s.requestTimeout)
	h = filters.WithWarnings(h)
	h = filters.WithProbabilisticGoaway(h, s.goawayChance)
	h = filters.WithCacheControl(h)
	h = filters.WithRequestInfo(h)
	h = filters.WithPanicRecovery(h)
	return filters.WithAuditInit(h)
}
