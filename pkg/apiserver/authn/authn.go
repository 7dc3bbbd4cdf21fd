// Package authn tells who sends a request, as kube-apiserver's
// authentication chain does: an authenticating proxy's headers
// (--requestheader-*), client certificates against --client-ca-file, then
// bearer tokens (--token-auth-file, service account tokens, both legacy
// and bound, bootstrap tokens, JWTs of OpenID issuers), each an authenticator of k8s.io/apiserver's
// authenticator.Request or authenticator.Token contract. The first that
// recognizes the request wins; every user it returns is also in
// system:authenticated. A request none recognizes and that showed no
// invalid credentials is system:anonymous (when anonymous requests are
// allowed).
//
// Layers: part of pkg/apiserver; the registry objects a token depends on
// (service accounts, pods, secrets, nodes) are read through the small
// ObjectGetter interface that cmd wires to the registry.
package authn

import (
	"crypto/x509"
	"net/http"
	"slices"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Config of the authentication chain.
type Config struct {
	// RequestHeader, when set, authenticates the users an authenticating
	// proxy names in headers (kube's --requestheader-*), before anything
	// else, as kube's chain does.
	RequestHeader *RequestHeaderConfig
	// ClientCAs verify client certificates; nil accepts none.
	ClientCAs *x509.CertPool
	// TokenFile holds static tokens (nil: none).
	TokenFile authenticator.Token
	// ServiceAccounts authenticate service account tokens (legacy then
	// bound), nil when not configured.
	ServiceAccounts []authenticator.Token
	// BootstrapTokens, when set, authenticates bootstrap tokens (kube's
	// --enable-bootstrap-token-auth), after the service accounts.
	BootstrapTokens authenticator.Token
	// JWT, when set, authenticates the tokens of OpenID issuers
	// (--authentication-config's jwt authenticators, or the --oidc-*
	// flags), after the service accounts and bootstrap tokens, as kube's:
	// both verify JWTs, and a service account token must not make an
	// issuer's keys be fetched again.
	JWT authenticator.Token
	// APIAudiences are the audiences of this API (kube's
	// --api-audiences): tokens that carry no audience of their own are
	// valid for these.
	APIAudiences authenticator.Audiences
	// Anonymous makes requests without credentials system:anonymous;
	// without it they are refused (401).
	Anonymous bool
	// AnonymousPaths, when not empty, are the only paths anonymous
	// requests may have (the conditions of --authentication-config's
	// anonymous authenticator); others are refused.
	AnonymousPaths []string
}

// New builds the chain cfg describes.
func New(cfg Config) authenticator.Request {
	var chain requestUnion
	if cfg.RequestHeader != nil {
		chain = append(chain, NewRequestHeader(*cfg.RequestHeader))
	}
	if cfg.ClientCAs != nil {
		chain = append(chain, NewClientCert(cfg.ClientCAs))
	}
	var tokens tokenUnion
	if cfg.TokenFile != nil {
		tokens = append(tokens, authenticator.WrapAudienceAgnosticToken(cfg.APIAudiences, cfg.TokenFile))
	}
	tokens = append(tokens, cfg.ServiceAccounts...)
	if cfg.BootstrapTokens != nil {
		tokens = append(tokens, authenticator.WrapAudienceAgnosticToken(cfg.APIAudiences, cfg.BootstrapTokens))
	}
	if cfg.JWT != nil {
		tokens = append(tokens, cfg.JWT)
	}
	if len(tokens) > 0 {
		chain = append(chain, bearerToken{tokens})
	}
	var a authenticator.Request = authenticatedGroupAdder{chain}
	if cfg.Anonymous {
		a = anonymousFallback{Request: a, paths: cfg.AnonymousPaths}
	}
	return a
}

// requestUnion asks each authenticator in turn: the first that recognizes
// the request wins; when none does, their errors are the answer.
type requestUnion []authenticator.Request

func (u requestUnion) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	return firstRecognized(u, func(a authenticator.Request) (*authenticator.Response, bool, error) {
		return a.AuthenticateRequest(r)
	})
}

// firstRecognized tries each of items in turn: the first that recognizes
// the credentials wins; when none does, the errors of all are the answer.
func firstRecognized[T any](items []T, try func(T) (*authenticator.Response, bool, error)) (*authenticator.Response, bool, error) {
	var errs []error
	for _, it := range items {
		resp, ok, err := try(it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return resp, true, nil
		}
	}
	return nil, false, utilerrors.NewAggregate(errs)
}

// authenticatedGroupAdder puts every authenticated user in
// system:authenticated.
type authenticatedGroupAdder struct{ authenticator.Request }

func (g authenticatedGroupAdder) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	resp, ok, err := g.Request.AuthenticateRequest(r)
	if err != nil || !ok {
		return nil, ok, err
	}
	u := resp.User
	if u.GetName() == user.Anonymous || slices.ContainsFunc(u.GetGroups(), func(g string) bool {
		return g == user.AllAuthenticated || g == user.AllUnauthenticated
	}) {
		return resp, true, nil
	}
	out := *resp
	out.User = &user.DefaultInfo{
		Name: u.GetName(), UID: u.GetUID(), Extra: u.GetExtra(),
		Groups: append(slices.Clip(u.GetGroups()), user.AllAuthenticated),
	}
	return &out, true, nil
}

// anonymousFallback makes a request the chain did not recognize, and that
// showed no invalid credentials, system:anonymous in
// system:unauthenticated, when its path is one of paths (if any).
type anonymousFallback struct {
	authenticator.Request
	paths []string
}

func (a anonymousFallback) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	resp, ok, err := a.Request.AuthenticateRequest(r)
	if ok || err != nil {
		return resp, ok, err
	}
	if len(a.paths) > 0 && !slices.Contains(a.paths, r.URL.Path) {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
}
