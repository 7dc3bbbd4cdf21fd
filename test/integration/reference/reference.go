// Package reference lets integration tests compare this server's answers
// with kube-apiserver's: a test speaks raw HTTP to a Target (the test
// server, or with -record the reference kube-apiserver at $PEER_URL,
// whose answers the test writes into its testdata), and a Normalizer
// hides what differs between two servers and two runs (times, UIDs,
// resourceVersions, the test's namespace) before answers are compared.
package reference

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// Record makes the tests that use it run against the reference
// kube-apiserver named by $PEER_URL (token $PEER_TOKEN) and write what it
// answered into testdata, instead of checking this server.
var Record = flag.Bool("record", false, "record testdata from the kube-apiserver at $PEER_URL (token $PEER_TOKEN)")

// Target is a server the raw tests speak to.
type Target struct {
	URL, Token string
	Client     *http.Client
	// Kubectl are the flags that point kubectl at the server.
	Kubectl []string
}

// For returns srv, or the reference with -record.
func For(t testing.TB, srv *testserver.TestServer) *Target {
	t.Helper()
	if !*Record {
		return &Target{URL: srv.URL, Token: srv.Token, Client: srv.HTTPClient(t), Kubectl: []string{"--kubeconfig", srv.Server.KubeconfigPath}}
	}
	url, token := os.Getenv("PEER_URL"), os.Getenv("PEER_TOKEN")
	if url == "" || token == "" {
		t.Fatal("-record needs $PEER_URL and $PEER_TOKEN (eval the exports of the reference's start-kube.sh)")
	}
	return &Target{
		URL: url, Token: token,
		Client:  &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}, //nolint:gosec // the reference on loopback
		Kubectl: []string{"--server", url, "--token", token, "--insecure-skip-tls-verify"},
	}
}

// Request is one raw request, sent as the administrator.
type Request struct {
	Method, Path string
	// ContentType goes with a non-empty Body; Accept "" asks for JSON;
	// UserAgent "" sends none.
	ContentType, Accept, UserAgent, Body string
}

// Response is what a raw request got back.
type Response struct {
	Code     int
	Body     []byte
	Warnings []string
}

// Do sends r.
func (tg *Target) Do(t testing.TB, r Request) Response {
	t.Helper()
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(c, r.Method, tg.URL+r.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tg.Token)
	req.Header.Set("Accept", "application/json")
	if r.Accept != "" {
		req.Header.Set("Accept", r.Accept)
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	req.Header["User-Agent"] = []string{r.UserAgent}
	resp, err := tg.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", r.Method, r.Path, err)
	}
	return Response{Code: resp.StatusCode, Body: data, Warnings: resp.Header.Values("Warning")}
}

// Answer is a Response normalised for comparison.
type Answer struct {
	Code     int      `json:"code"`
	Body     any      `json:"body"`
	Warnings []string `json:"warnings,omitempty"`
}

// Normalizer hides what differs between servers and runs: times, ages
// in tables,
// UIDs (but those starting with FixedUIDPrefix, which tests write), the
// random names of service account volumes, and the namespace's name
// (NS); resourceVersions become rv1, rv2... in the order they first
// appear, so that equal ones stay equal.
type Normalizer struct {
	ns  string
	rvs map[string]string
	// HideListVersions replaces the resourceVersion of lists and tables
	// by "<list>": it is the store's latest revision, which counts what
	// else a server wrote meanwhile (this one creates a new namespace's
	// service account and CA config map, the reference does not).
	HideListVersions bool
}

// FixedUIDPrefix starts the UIDs tests write themselves.
const FixedUIDPrefix = "0d2d1a4c-0000-"

// NewNormalizer returns a Normalizer of the answers of a test working in
// namespace ns.
func NewNormalizer(ns string) *Normalizer { return &Normalizer{ns: ns, rvs: map[string]string{}} }

var (
	timestamp  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	age        = regexp.MustCompile(`^(\d+[smhdy])+$`)
	randomName = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
	uid        = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// Answer normalises r.
func (n *Normalizer) Answer(r Response) Answer {
	a := Answer{Code: r.Code}
	body := n.Namespace(string(r.Body))
	if err := json.Unmarshal([]byte(body), &a.Body); err != nil {
		a.Body = body
	}
	if m, ok := a.Body.(map[string]any); ok && n.HideListVersions && (m["kind"] == "Table" || strings.HasSuffix(fmt.Sprint(m["kind"]), "List")) {
		if meta, ok := m["metadata"].(map[string]any); ok && meta["resourceVersion"] != nil {
			meta["resourceVersion"] = "<list>"
		}
	}
	a.Body = n.Value("", a.Body)
	for _, w := range r.Warnings {
		a.Warnings = append(a.Warnings, n.Namespace(w))
	}
	return a
}

// Namespace replaces the test's namespace in s by NS.
func (n *Normalizer) Namespace(s string) string { return strings.ReplaceAll(s, n.ns, "NS") }

// Value normalises a decoded JSON value found under key ("" in lists).
func (n *Normalizer) Value(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = n.Value(k, x)
		}
		// A Table row's ages ("5s"), not a quantity's "100m" elsewhere.
		if cells, ok := v["cells"].([]any); ok {
			for i, c := range cells {
				if s, ok := c.(string); ok && age.MatchString(s) {
					cells[i] = "<age>"
				}
			}
		}
		if entries, ok := v["managedFields"].([]any); ok {
			sortManagedFields(entries)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = n.Value("", x)
		}
		return v
	case string:
		switch {
		case key == "resourceVersion" && v != "":
			if _, ok := n.rvs[v]; !ok {
				n.rvs[v] = fmt.Sprintf("rv%d", len(n.rvs)+1)
			}
			return n.rvs[v]
		case timestamp.MatchString(v):
			return "<time>"
		}
		v = uid.ReplaceAllStringFunc(v, func(u string) string {
			if strings.HasPrefix(u, FixedUIDPrefix) {
				return u
			}
			return "<uid>"
		})
		return randomName.ReplaceAllString(v, "kube-api-access-<random>")
	}
	return v
}

// sortManagedFields orders managed fields entries without their times:
// servers order them by operation, time (to the second), manager...; the
// times of two runs cross second boundaries at different writes.
func sortManagedFields(entries []any) {
	key := func(e any) string {
		m, _ := e.(map[string]any)
		return fmt.Sprint(m["operation"], "\x00", m["manager"], "\x00", m["subresource"], "\x00", m["apiVersion"])
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// RoundTrip returns v as JSON decoding gives it (as recorded answers
// are), in a new value of the same type.
func RoundTrip[T any](t testing.TB, v T) T {
	t.Helper()
	var out T
	if err := json.Unmarshal([]byte(MustJSON(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// MustJSON marshals v, failing the test on error.
func MustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
