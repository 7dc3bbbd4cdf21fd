package authn

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// RequestHeaderConfig is kube's front-proxy authentication (the
// --requestheader-* flags): a proxy that presents a client certificate
// signed by ClientCAs (and, when AllowedNames is set, named by one of
// them) tells who the user is in request headers. The aggregation layer
// and authenticating proxies use it.
type RequestHeaderConfig struct {
	ClientCAs    *x509.CertPool
	AllowedNames []string
	// UsernameHeaders, UIDHeaders: the first header of each list that
	// has a value is the user's name, uid.
	UsernameHeaders, UIDHeaders []string
	// GroupHeaders: every value of each is a group.
	GroupHeaders []string
	// ExtraHeaderPrefixes: a header named PREFIX<key> carries values of
	// the user's extra <key> (lower case, %-decoded).
	ExtraHeaderPrefixes []string
}

// requestHeader is the authenticator of RequestHeaderConfig.
type requestHeader struct{ cfg RequestHeaderConfig }

// NewRequestHeader returns the front-proxy authenticator of cfg.
func NewRequestHeader(cfg RequestHeaderConfig) authenticator.Request { return requestHeader{cfg} }

// AuthenticateRequest implements authenticator.Request. A request whose
// certificate does not verify fails (another authenticator may still
// recognize it); one from a trusted proxy without a user name header is
// not recognized. The headers that carried the user are removed, so that
// nothing after authentication mistakes them for the client's.
func (a requestHeader) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	chains, err := verifyClientCert(a.cfg.ClientCAs, r.TLS.PeerCertificates)
	if err != nil {
		return nil, false, err
	}
	if cn := chains[0][0].Subject.CommonName; len(a.cfg.AllowedNames) > 0 && !slices.Contains(a.cfg.AllowedNames, cn) {
		return nil, false, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", cn)
	}
	name := firstHeaderValue(r.Header, a.cfg.UsernameHeaders)
	if name == "" {
		return nil, false, nil
	}
	info := &user.DefaultInfo{
		Name:   name,
		UID:    firstHeaderValue(r.Header, a.cfg.UIDHeaders),
		Groups: allHeaderValues(r.Header, a.cfg.GroupHeaders),
		Extra:  extraHeaders(r.Header, a.cfg.ExtraHeaderPrefixes),
	}
	a.clearHeaders(r.Header)
	return &authenticator.Response{User: info}, true, nil
}

func (a requestHeader) clearHeaders(h http.Header) {
	for _, names := range [][]string{a.cfg.UsernameHeaders, a.cfg.UIDHeaders, a.cfg.GroupHeaders} {
		for _, name := range names {
			h.Del(name)
		}
	}
	for k := range h {
		if hasPrefixFold(k, a.cfg.ExtraHeaderPrefixes) != "" {
			delete(h, k)
		}
	}
}

func firstHeaderValue(h http.Header, names []string) string {
	for _, name := range names {
		if v := h.Get(name); v != "" {
			return v
		}
	}
	return ""
}

func allHeaderValues(h http.Header, names []string) []string {
	out := []string{}
	for _, name := range names {
		for _, v := range h[http.CanonicalHeaderKey(name)] {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// extraHeaders collects the extras, prefix by prefix so that values keep
// the order of the prefixes.
func extraHeaders(h http.Header, prefixes []string) map[string][]string {
	out := map[string][]string{}
	for _, prefix := range prefixes {
		for name, values := range h {
			if hasPrefixFold(name, []string{prefix}) == "" {
				continue
			}
			key := strings.ToLower(name[len(prefix):])
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			out[key] = append(out[key], values...)
		}
	}
	return out
}

// hasPrefixFold returns the prefix of prefixes s starts with, ignoring
// case, or "".
func hasPrefixFold(s string, prefixes []string) string {
	for _, p := range prefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return p
		}
	}
	return ""
}
