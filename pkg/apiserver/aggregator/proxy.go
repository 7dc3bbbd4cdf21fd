package aggregator

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authentication/user"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// discoveryTimeout bounds a proxied discovery request (/apis/GROUP/VERSION),
// as kube's aggregator does: clients ask every group at once and must not
// wait on one slow extension.
const discoveryTimeout = 5 * time.Second

// Remote is one APIService as the availability controller hands it to
// the server: the object (its spec says where to proxy, its Available
// condition whether to), and what discovery knows of its group version.
type Remote struct {
	APIService *apiregistrationv1.APIService
	// Resources are what its server last answered at
	// /apis/GROUP/VERSION (nil: never fetched).
	Resources []metav1.APIResource
	// Stale is true when the last fetch failed: discovery lists the
	// group version with the resources last known, marked Stale.
	Stale bool
	// OpenAPIV2 and OpenAPIV3 are its server's /openapi/v2 document and
	// /openapi/v3 document of apis/GROUP/VERSION, as last fetched (nil:
	// never).
	OpenAPIV2, OpenAPIV3 []byte
}

// Config of a Proxy.
type Config struct {
	// Resolver finds where a service is reached.
	Resolver Resolver
	// ClientCert is the front-proxy client certificate presented to every
	// extension API server (--proxy-client-cert-file; nil: none, and
	// the extension servers cannot tell the proxy from a client).
	ClientCert *tls.Certificate
	// RejectForwardingRedirects answers 502 for a redirect an extension
	// server sends, rather than pass it to the client (kube's
	// --aggregator-reject-forwarding-redirect, on by default there).
	RejectForwardingRedirects bool
}

// Proxy routes the group versions of APIServices with a service to their
// extension API servers. Its state is replaced whole by SetAPIServices
// and read with one atomic load per request.
type Proxy struct {
	resolver        Resolver
	clientCert      *tls.Certificate
	rejectRedirects bool

	mu      sync.Mutex // serializes SetAPIServices
	targets atomic.Pointer[map[schema.GroupVersion]*target]
}

// target is where one remote group version is proxied.
type target struct {
	name      string
	service   apiregistrationv1.ServiceReference
	available bool
	// tls are the inputs of transport: a target whose inputs did not
	// change keeps its transport (and its open connections).
	tls          tlsInputs
	transport    *http.Transport
	transportErr error
}

// New returns a proxy serving no group version until SetAPIServices.
func New(cfg Config) *Proxy {
	p := &Proxy{resolver: cfg.Resolver, clientCert: cfg.ClientCert, rejectRedirects: cfg.RejectForwardingRedirects}
	p.targets.Store(&map[schema.GroupVersion]*target{})
	return p
}

// SetAPIServices makes the proxy serve the group versions of the
// APIServices of list that name a service, in place of those it served.
func (p *Proxy) SetAPIServices(list []Remote) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := *p.targets.Load()
	next := map[schema.GroupVersion]*target{}
	for _, r := range list {
		s := r.APIService
		if s.Spec.Service == nil {
			continue
		}
		gv := schema.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}
		t := &target{name: s.Name, service: *s.Spec.Service, available: isAvailable(s), tls: tlsInputsOf(s)}
		if t.service.Port == nil {
			port := int32(443)
			t.service.Port = &port
		}
		if prev := old[gv]; prev != nil && prev.tls.equal(t.tls) {
			t.transport, t.transportErr = prev.transport, prev.transportErr
		} else {
			t.transport, t.transportErr = newTransport(t.tls, p.clientCert)
			if t.transportErr != nil {
				slog.Warn("aggregator: building the transport of an APIService", "name", s.Name, "error", t.transportErr)
			}
		}
		next[gv] = t
	}
	p.targets.Store(&next)
	for gv, t := range old {
		if n := next[gv]; t.transport != nil && (n == nil || n.transport != t.transport) {
			t.transport.CloseIdleConnections()
		}
	}
}

func isAvailable(s *apiregistrationv1.APIService) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

// Serve proxies r when its path is under the group version of an
// APIService with a service, and reports whether it did (false: the
// server's own routes serve it).
func (p *Proxy) Serve(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/")
	if !ok {
		return false
	}
	group, rest, _ := strings.Cut(rest, "/")
	version, _, _ := strings.Cut(rest, "/")
	t := (*p.targets.Load())[schema.GroupVersion{Group: group, Version: version}]
	if t == nil || version == "" {
		return false
	}
	p.proxy(w, r, t)
	return true
}

// proxy passes r to t's server, as kube's aggregator: unavailable
// APIServices and unresolvable services are 503 "service unavailable"
// (plain text, as kube writes it); the user this server authenticated
// (and authorized) goes in the front-proxy headers, never the client's
// own credentials.
func (p *Proxy) proxy(w http.ResponseWriter, r *http.Request, t *target) {
	if !t.available {
		proxyError(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if t.transportErr != nil {
		proxyError(w, t.transportErr.Error(), http.StatusInternalServerError)
		return
	}
	u, ok := request.UserFrom(r.Context())
	if !ok {
		proxyError(w, "missing user", http.StatusInternalServerError)
		return
	}
	loc, err := p.resolver.ResolveEndpoint(r.Context(), t.service.Namespace, t.service.Name, *t.service.Port)
	if err != nil {
		slog.Warn("aggregator: resolving a service", "service", t.service.Namespace+"/"+t.service.Name, "error", err)
		proxyError(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	location := &url.URL{Scheme: "https", Host: loc.Host, Path: r.URL.Path, RawQuery: r.URL.Query().Encode()}
	ctx := r.Context()
	if isGroupVersionDiscovery(r) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, discoveryTimeout)
		defer cancel()
	}
	out := r.WithContext(ctx)
	out.Header = r.Header.Clone()
	out.URL, out.Host = location, location.Host
	if id := w.Header().Get("Audit-Id"); id != "" {
		out.Header.Set("Audit-ID", id)
	}
	SetUserHeaders(out.Header, u)
	upgrade := httpstream.IsUpgradeRequest(r)
	// An upgrade dials the server itself with the transport's TLS
	// configuration, so the headers go on the request, not in a round
	// tripper.
	h := proxy.NewUpgradeAwareHandler(location, t.transport, true, upgrade, responder{w: w})
	h.RejectForwardingRedirects = p.rejectRedirects
	h.ServeHTTP(w, out)
}

// isGroupVersionDiscovery reports whether r asks for a group version's
// discovery document (/apis/GROUP/VERSION).
func isGroupVersionDiscovery(r *http.Request) bool {
	info, ok := request.InfoFrom(r.Context())
	return ok && !info.IsResourceRequest && len(strings.Split(strings.Trim(info.Path, "/"), "/")) == 3
}

// SetUserHeaders makes h name u the way kube's aggregator names the
// user to extension API servers (fixed header names, whatever
// --requestheader-*-headers say): X-Remote-User, X-Remote-Uid,
// X-Remote-Group per group and X-Remote-Extra-KEY per value, the key
// escaped as kube escapes it. Every such header the client sent is
// removed first, as are its credentials (Authorization, Impersonate-*):
// the extension server trusts these headers because this server's client
// certificate vouches for them.
func SetUserHeaders(h http.Header, u user.Info) {
	for name := range h {
		canonical := http.CanonicalHeaderKey(name)
		if canonical == "Authorization" || canonical == "X-Remote-User" || canonical == "X-Remote-Uid" ||
			canonical == "X-Remote-Group" || strings.HasPrefix(canonical, "X-Remote-Extra-") ||
			strings.HasPrefix(canonical, "Impersonate-") {
			delete(h, name)
		}
	}
	h.Set("X-Remote-User", u.GetName())
	if uid := u.GetUID(); uid != "" {
		h.Set("X-Remote-Uid", uid)
	}
	for _, g := range u.GetGroups() {
		h.Add("X-Remote-Group", g)
	}
	for key, values := range u.GetExtra() {
		for _, v := range values {
			h.Add("X-Remote-Extra-"+escapeHeaderKey(key), v)
		}
	}
}

// escapeHeaderKey percent-encodes what may not appear in a header name
// (and '%' itself), as client-go's front-proxy headers do: the
// requestheader authenticator unescapes it.
func escapeHeaderKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		if c := key[i]; c == '%' || !isTokenByte(c) {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isTokenByte: RFC 7230's tchar.
func isTokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&'*+-.^_`|~", c) >= 0
}

// proxyError writes kube's aggregator's errors: plain text, not a Status.
func proxyError(w http.ResponseWriter, msg string, code int) {
	http.Error(w, msg, code)
}

// responder reports a failure of the connection to the extension server
// as kube's aggregator does: 503 with the error's text.
type responder struct{ w http.ResponseWriter }

func (r responder) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	slog.Debug("aggregator: proxying", "error", err)
	http.Error(r.w, err.Error(), http.StatusServiceUnavailable)
}
