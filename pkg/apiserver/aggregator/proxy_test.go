package aggregator

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apiservertest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// staticResolver resolves every service to url, or fails with err.
type staticResolver struct {
	url *url.URL
	err error
}

func (r staticResolver) ResolveEndpoint(context.Context, string, string, int32) (*url.URL, error) {
	return r.url, r.err
}

// extension is a TLS server standing for an extension API server: it
// serves a certificate for api.wardle.svc and records what it received.
type extension struct {
	srv *httptest.Server
	ca  *apiservertest.CA

	mu       sync.Mutex
	headers  http.Header
	peerCNs  []string
	requests []string
}

func newExtension(t *testing.T, clientCA *apiservertest.CA, h http.HandlerFunc) *extension {
	e := &extension{ca: apiservertest.NewCA(t, "wardle-ca")}
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.headers = r.Header.Clone()
		e.requests = append(e.requests, r.Method+" "+r.URL.RequestURI())
		e.peerCNs = nil
		for _, c := range r.TLS.PeerCertificates {
			e.peerCNs = append(e.peerCNs, c.Subject.CommonName)
		}
		e.mu.Unlock()
		h(w, r)
	}))
	e.srv.TLS = &tls.Config{Certificates: []tls.Certificate{e.ca.Issue(t, "api", "api.wardle.svc")}}
	if clientCA != nil {
		e.srv.TLS.ClientAuth, e.srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, clientCA.Pool()
	}
	e.srv.StartTLS()
	t.Cleanup(e.srv.Close)
	return e
}

func (e *extension) url(t *testing.T) *url.URL {
	u, err := url.Parse(e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func apiService(caBundle []byte, available bool) *apiregistrationv1.APIService {
	status := apiregistrationv1.ConditionFalse
	if available {
		status = apiregistrationv1.ConditionTrue
	}
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: "wardle.example.com", Version: "v1alpha1", CABundle: caBundle,
			Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api"},
		},
		Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{
			{Type: apiregistrationv1.Available, Status: status},
		}},
	}
}

var jane = &user.DefaultInfo{Name: "jane", UID: "uid-1", Groups: []string{"dev", user.AllAuthenticated},
	Extra: map[string][]string{"example.org/scope": {"a", "b"}}}

// front serves p as this server's routes do, the filters' user in the
// context (none when u is nil); the rest is "local".
func front(t *testing.T, p *Proxy, u user.Info) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u != nil {
			r = r.WithContext(request.WithUser(r.Context(), u))
		}
		if !p.Serve(w, r) {
			io.WriteString(w, "local")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, rawURL string, header http.Header) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
	maps := header.Clone()
	if maps != nil {
		req.Header = maps
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// TestProxyHeaders: the client's credentials and user headers never
// reach the extension server; the user this server authenticated does,
// in kube's front-proxy headers, vouched for by the proxy's client
// certificate; the path and query go unchanged.
func TestProxyHeaders(t *testing.T) {
	proxyCA := apiservertest.NewCA(t, "front-proxy-ca")
	clientCert := proxyCA.Issue(t, "front-proxy-client")
	ext := newExtension(t, proxyCA, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "remote") })
	p := New(Config{Resolver: staticResolver{url: ext.url(t)}, ClientCert: &clientCert})
	p.SetAPIServices([]Remote{{APIService: apiService(ext.ca.PEM, true)}})
	srv := front(t, p, jane)

	code, body, _ := get(t, srv.URL+"/apis/wardle.example.com/v1alpha1/namespaces/ns/flunders?labelSelector=a%3Db&watch=true", http.Header{
		"Authorization":           {"Bearer secret-token"},
		"X-Remote-User":           {"mallory"},
		"X-Remote-Group":          {"system:masters"},
		"X-Remote-Extra-Scopes":   {"all"},
		"X-Remote-Uid":            {"0"},
		"Impersonate-User":        {"admin"},
		"Impersonate-Extra-Scope": {"all"},
		"Accept":                  {"application/json"},
	})
	if code != http.StatusOK || body != "remote" {
		t.Fatalf("got %d %q", code, body)
	}
	ext.mu.Lock()
	defer ext.mu.Unlock()
	for name := range ext.headers {
		if name == "Authorization" || strings.HasPrefix(name, "Impersonate-") {
			t.Errorf("the client's %s reached the extension server", name)
		}
	}
	want := http.Header{
		"X-Remote-User":                      {"jane"},
		"X-Remote-Uid":                       {"uid-1"},
		"X-Remote-Group":                     {"dev", user.AllAuthenticated},
		"X-Remote-Extra-Example.org%2fscope": {"a", "b"},
	}
	for name, values := range ext.headers {
		if strings.HasPrefix(name, "X-Remote-") && !slices.Equal(values, want[name]) {
			t.Errorf("%s: %q, want %q", name, values, want[name])
		}
	}
	for name, values := range want {
		if !slices.Equal(ext.headers[name], values) {
			t.Errorf("%s: %q, want %q", name, ext.headers[name], values)
		}
	}
	if got := ext.headers.Get("Accept"); got != "application/json" {
		t.Errorf("Accept %q: other headers must pass", got)
	}
	if !slices.Equal(ext.peerCNs, []string{"front-proxy-client"}) {
		t.Errorf("client certificate %q, want the proxy's", ext.peerCNs)
	}
	if want := "GET /apis/wardle.example.com/v1alpha1/namespaces/ns/flunders?labelSelector=a%3Db&watch=true"; ext.requests[0] != want {
		t.Errorf("request %q, want %q", ext.requests[0], want)
	}
}

// TestEscapeHeaderKey: as client-go's, so the extension server's
// requestheader authenticator reads the key back.
func TestEscapeHeaderKey(t *testing.T) {
	for in, want := range map[string]string{
		"scopes": "scopes", "example.org/scope": "example.org%2Fscope", "100%": "100%25", "a b": "a%20b",
	} {
		if got := escapeHeaderKey(in); got != want {
			t.Errorf("escapeHeaderKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProxyErrors: kube's aggregator's answers (plain text) when the
// extension server cannot be reached as it should.
func TestProxyErrors(t *testing.T) {
	proxyCA := apiservertest.NewCA(t, "front-proxy-ca")
	clientCert := proxyCA.Issue(t, "front-proxy-client")
	ext := newExtension(t, proxyCA, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "remote") })
	otherCA := apiservertest.NewCA(t, "other-ca")
	for _, tc := range []struct {
		name     string
		service  *apiregistrationv1.APIService
		resolver Resolver
		user     user.Info
		wantCode int
		wantBody string
	}{
		{name: "unavailable", service: apiService(ext.ca.PEM, false), resolver: staticResolver{url: ext.url(t)}, user: jane,
			wantCode: http.StatusServiceUnavailable, wantBody: "service unavailable\n"},
		{name: "bad caBundle", service: apiService([]byte("not a certificate"), true), resolver: staticResolver{url: ext.url(t)}, user: jane,
			wantCode: http.StatusInternalServerError, wantBody: "unable to load root certificates: unable to parse bytes as PEM block\n"},
		{name: "caBundle of another CA", service: apiService(otherCA.PEM, true), resolver: staticResolver{url: ext.url(t)}, user: jane,
			wantCode: http.StatusServiceUnavailable, wantBody: "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{name: "no endpoints", service: apiService(ext.ca.PEM, true), user: jane,
			resolver: staticResolver{err: apierrors.NewServiceUnavailable(`no endpoints available for service "api"`)},
			wantCode: http.StatusServiceUnavailable, wantBody: "service unavailable\n"},
		{name: "server down", service: apiService(ext.ca.PEM, true), user: jane,
			resolver: staticResolver{url: &url.URL{Scheme: "https", Host: closedPort(t)}},
			wantCode: http.StatusServiceUnavailable, wantBody: "connect: connection refused"},
		{name: "no user", service: apiService(ext.ca.PEM, true), resolver: staticResolver{url: ext.url(t)},
			wantCode: http.StatusInternalServerError, wantBody: "missing user\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Config{Resolver: tc.resolver, ClientCert: &clientCert})
			p.SetAPIServices([]Remote{{APIService: tc.service}})
			code, body, header := get(t, front(t, p, tc.user).URL+"/apis/wardle.example.com/v1alpha1/flunders", nil)
			if code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
				t.Errorf("got %d %q, want %d %q", code, body, tc.wantCode, tc.wantBody)
			}
			if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type %q, want kube's text/plain", ct)
			}
		})
	}
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestProxyRouting: only the group versions of APIServices with a
// service are proxied; Local ones, other versions and the group's own
// document (/apis/GROUP) are the server's.
func TestProxyRouting(t *testing.T) {
	ext := newExtension(t, nil, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "remote") })
	p := New(Config{Resolver: staticResolver{url: ext.url(t)}})
	local := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1"}}
	p.SetAPIServices([]Remote{{APIService: apiService(ext.ca.PEM, true)}, {APIService: local}})
	srv := front(t, p, jane)
	for path, want := range map[string]string{
		"/apis/wardle.example.com/v1alpha1":          "remote",
		"/apis/wardle.example.com/v1alpha1/flunders": "remote",
		"/apis/wardle.example.com":                   "local",
		"/apis/wardle.example.com/v1beta1":           "local",
		"/apis/apps/v1/deployments":                  "local",
		"/api/v1/pods":                               "local",
	} {
		if _, body, _ := get(t, srv.URL+path, nil); body != want {
			t.Errorf("%s: %q, want %q", path, body, want)
		}
	}
	// Removed: no longer proxied.
	p.SetAPIServices(nil)
	if _, body, _ := get(t, srv.URL+"/apis/wardle.example.com/v1alpha1", nil); body != "local" {
		t.Errorf("after removal: %q", body)
	}
}

// TestProxyStreams: a watch's events reach the client as the extension
// server flushes them, and an upgraded connection carries bytes both
// ways, the user's headers on its request.
func TestProxyStreams(t *testing.T) {
	events := make(chan string)
	ext := newExtension(t, nil, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "test-stream" {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-stream\r\n\r\n")
			rw.Flush()
			line, _ := rw.ReadString('\n')
			rw.WriteString("echo " + r.Header.Get("X-Remote-User") + " " + line)
			rw.Flush()
			return
		}
		// As a watch does: the headers at once, then each event flushed.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		for ev := range events {
			io.WriteString(w, ev+"\n")
			http.NewResponseController(w).Flush()
		}
	})
	p := New(Config{Resolver: staticResolver{url: ext.url(t)}})
	p.SetAPIServices([]Remote{{APIService: apiService(ext.ca.PEM, true)}})
	srv := front(t, p, jane)

	t.Run("watch", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/apis/wardle.example.com/v1alpha1/flunders?watch=true")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for i := range 3 {
			ev := fmt.Sprintf(`{"type":"ADDED","n":%d}`, i)
			events <- ev
			got, err := readLineWithin(r, 5*time.Second)
			if err != nil || got != ev+"\n" {
				t.Fatalf("event %d: %q, %v", i, got, err)
			}
		}
		close(events)
	})
	t.Run("upgrade", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /apis/wardle.example.com/v1alpha1/namespaces/ns/flunders/x/exec HTTP/1.1\r\nHost: x\r\n"+
			"Connection: Upgrade\r\nUpgrade: test-stream\r\nX-Remote-User: mallory\r\n\r\n")
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
		io.WriteString(conn, "ping\n")
		got, err := readLineWithin(r, 5*time.Second)
		if err != nil || got != "echo jane ping\n" {
			t.Errorf("through the upgraded connection: %q, %v", got, err)
		}
	})
}

func readLineWithin(r *bufio.Reader, d time.Duration) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := r.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-time.After(d):
		return "", errors.New("timed out")
	}
}

// TestProxyRedirects: an extension server's redirect reaches the client
// only with RejectForwardingRedirects off; on (kube's default), it is a
// 502.
func TestProxyRedirects(t *testing.T) {
	ext := newExtension(t, nil, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example.com/", http.StatusFound)
	})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		reject bool
		want   int
	}{{true, http.StatusBadGateway}, {false, http.StatusFound}} {
		p := New(Config{Resolver: staticResolver{url: ext.url(t)}, RejectForwardingRedirects: tc.reject})
		p.SetAPIServices([]Remote{{APIService: apiService(ext.ca.PEM, true)}})
		srv := front(t, p, jane)
		resp, err := noFollow.Get(srv.URL + "/apis/wardle.example.com/v1alpha1/flunders")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("RejectForwardingRedirects %v: status %d, want %d", tc.reject, resp.StatusCode, tc.want)
		}
	}
}
