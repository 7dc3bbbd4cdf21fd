package resource

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var record = flag.Bool("record", false, "run testdata/requests against the kube-apiserver at $PEER_URL (token $PEER_TOKEN) and record its answers in testdata/kube")

// step is one request of a case in testdata/requests: NAMESPACE in its
// path and body is the test's namespace (cluster-scoped objects carry it
// in their names, so that runs do not collide).
type step struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
	// ContentType defaults to application/json.
	ContentType string `json:"contentType,omitempty"`
}

// answer is what a server answered to a step, normalized.
type answer struct {
	Code int             `json:"code"`
	Body json.RawMessage `json:"body"`
}

// TestKubeAnswers sends every case of testdata/requests, step by step, and
// compares each answer (code and body: Status causes with their order,
// defaulted objects) with kube-apiserver's in testdata/kube. The cases
// cover the validation a user hits per kind, defaults, immutability and
// the status subresources.
func TestKubeAnswers(t *testing.T) {
	files, err := filepath.Glob("testdata/requests/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			if !*record {
				t.Parallel()
			}
			var steps []step
			readJSON(t, f, &steps)
			target := ours(t)
			if *record {
				target = reference(t)
			}
			ns := target.namespace(t)
			var got []answer
			for _, s := range steps {
				got = append(got, target.do(t, s, ns))
			}
			data := marshal(t, got)
			golden := filepath.Join("testdata/kube", name+".json")
			if *record {
				if err := os.WriteFile(golden, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("answers differ from kube-apiserver's (%s):\n%s", golden, lineDiff(string(want), string(data)))
			}
		})
	}
}

// target is a server to send steps to.
type target struct {
	url, token string
	http       *http.Client
}

func ours(t *testing.T) target {
	return target{url: srv.URL, token: srv.Token, http: srv.HTTPClient(t)}
}

func reference(t *testing.T) target {
	url, token := os.Getenv("PEER_URL"), os.Getenv("PEER_TOKEN")
	if url == "" || token == "" {
		t.Fatal("-record needs PEER_URL and PEER_TOKEN (/work/shared/reference-kube/start-kube.sh)")
	}
	return target{url: url, token: token, http: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
}

// namespace creates a namespace of the case's own, by the same request
// on both servers (a case may show it).
func (tg target) namespace(t *testing.T) string {
	ns := testserver.NamespaceName(t)
	if *record {
		ns = fmt.Sprintf("rec-%d", time.Now().UnixNano())
	}
	a := tg.do(t, step{Method: "POST", Path: "/api/v1/namespaces", Body: json.RawMessage(`{"metadata":{"name":"` + ns + `"}}`)}, "")
	if a.Code != 201 {
		t.Fatalf("creating namespace: %d %s", a.Code, a.Body)
	}
	return ns
}

func (tg target) do(t *testing.T, s step, ns string) answer {
	t.Helper()
	var body io.Reader
	if s.Body != nil {
		body = strings.NewReader(strings.ReplaceAll(string(s.Body), "NAMESPACE", ns))
	}
	req, err := http.NewRequestWithContext(ctx(t), s.Method, tg.url+strings.ReplaceAll(s.Path, "NAMESPACE", ns), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tg.token)
	ct := s.ContentType
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", "application/json")
	resp, err := tg.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{Code: resp.StatusCode, Body: normalize(t, data, ns)}
}

var (
	rfc3339 = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)
	uid     = regexp.MustCompile(`"uid": "[0-9a-f-]{36}"`)
	rv      = regexp.MustCompile(`"resourceVersion": "\d+"`)
)

// normalize indents a body and blanks what differs from run to run: the
// namespace, uids, resourceVersions and times.
func normalize(t *testing.T, data []byte, ns string) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, data)
	}
	s := string(marshal(t, v))
	if ns != "" {
		s = strings.ReplaceAll(s, ns, "NAMESPACE")
	}
	s = rfc3339.ReplaceAllString(s, `"TIME"`)
	s = uid.ReplaceAllString(s, `"uid": "UID"`)
	s = rv.ReplaceAllString(s, `"resourceVersion": "RV"`)
	return json.RawMessage(s)
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// lineDiff shows the lines of got that differ from want's, with their
// numbers (enough to find the cause in the golden file).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := 0; i < max(len(w), len(g)) && len(out) < 40; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			out = append(out, fmt.Sprintf("%d:\n- %s\n+ %s", i+1, wl, gl))
		}
	}
	return strings.Join(out, "\n")
}
