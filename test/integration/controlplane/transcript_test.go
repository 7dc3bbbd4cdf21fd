package controlplane

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
)

// step is one request of a transcript and what kube-apiserver answered:
// the code and the body, normalized (see normalize).
type step struct {
	Name        string          `json:"name"`
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	ContentType string          `json:"contentType,omitempty"`
	Body        json.RawMessage `json:"body,omitempty"`
	Want        struct {
		Code     int      `json:"code"`
		Warnings []string `json:"warnings,omitempty"`
		Body     any      `json:"body"`
	} `json:"want"`
}

// server is where a transcript is replayed.
type server struct {
	url, token string
	client     *http.Client
}

func (s server) do(t *testing.T, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	code, _, data := s.send(t, method, path, contentType, body)
	return code, data
}

// send is do that also returns the texts of the Warning headers.
func (s server) send(t *testing.T, method, path, contentType string, body []byte) (int, []string, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, s.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json")
	if contentType == "" && body != nil {
		contentType = "application/json"
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, h := range resp.Header.Values("Warning") {
		// 299 - "text"
		if text, err := strconv.Unquote(strings.TrimPrefix(h, "299 - ")); err == nil {
			warnings = append(warnings, text)
		}
	}
	return resp.StatusCode, warnings, data
}

// replay sends the steps of testdata/<name>.json in order (later steps
// see what earlier ones did) and compares each answer with kube's. With
// -record-from it sends them to that kube-apiserver instead and rewrites
// the file with its answers.
func replay(t *testing.T, name string, filters ...objectFilter) {
	file := "testdata/" + name + ".json"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	if err := json.Unmarshal(data, &steps); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	target := server{url: srv.URL, token: srv.Token, client: srv.HTTPClient(t)}
	recording := *recordFrom != ""
	if recording {
		target = server{url: *recordFrom, token: *recordToken, client: &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	}
	for i := range steps {
		s := &steps[i]
		var body []byte
		if len(s.Body) > 0 && string(s.Body) != "null" {
			body = s.Body
		}
		code, warnings, resp := target.send(t, s.Method, s.Path, s.ContentType, body)
		got := normalize(t, resp, recording, filters)
		if recording {
			s.Want.Code, s.Want.Warnings, s.Want.Body = code, warnings, got
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			if code != s.Want.Code {
				t.Errorf("code %d, want %d: %s", code, s.Want.Code, resp)
			}
			if !slices.Equal(warnings, s.Want.Warnings) {
				t.Errorf("warnings %q, want %q", warnings, s.Want.Warnings)
			}
			if diff := cmp.Diff(s.Want.Body, got); diff != "" {
				t.Errorf("answer differs from kube's (-kube +this server):\n%s", diff)
			}
		})
	}
	if recording {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", " ")
		if err := enc.Encode(steps); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// normalize decodes an answer and drops what differs between two servers
// or two runs: identities, resource versions, times. Recorded answers
// name kube's user as this server's administrator.
func normalize(t *testing.T, data []byte, recorded bool, filters []objectFilter) any {
	t.Helper()
	if recorded {
		data = bytes.ReplaceAll(data, []byte(`"`+*recordUser+`"`), []byte(`"`+app.AdminTokenUser.Name+`"`))
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return string(data)
	}
	for _, f := range filters {
		f.filter(v)
	}
	return scrub(v)
}

// objectFilter changes the objects of a kind (and the items of its
// lists) before the comparison: it leaves out what a controller writes
// at its own pace, such as the status kube's flow control keeps.
type objectFilter struct {
	kind  string
	apply func(obj map[string]any)
}

func (f objectFilter) filter(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	switch m["kind"] {
	case f.kind:
		f.apply(m)
	case f.kind + "List":
		items, _ := m["items"].([]any)
		for _, item := range items {
			if im, ok := item.(map[string]any); ok {
				f.apply(im)
			}
		}
	}
}

// scrubbed are the fields that differ between servers and runs.
var scrubbed = map[string]bool{
	"uid": true, "resourceVersion": true, "creationTimestamp": true, "time": true,
	"lastTransitionTime": true, "lastUpdateTime": true,
}

func scrub(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if entries, ok := v["managedFields"].([]any); ok {
			sortManagedFields(entries)
		}
		for k, x := range v {
			if scrubbed[k] {
				if _, isString := x.(string); isString {
					v[k] = "<" + k + ">"
					continue
				}
			}
			v[k] = scrub(x)
		}
	case []any:
		for i := range v {
			v[i] = scrub(v[i])
		}
	}
	return v
}

// sortManagedFields orders managed fields entries as the server would if
// they had been written in the same second: kube orders them by
// operation, time (in seconds), manager, so the order of two servers'
// answers differs with the age of the objects alone.
func sortManagedFields(entries []any) {
	key := func(e any) string {
		m, _ := e.(map[string]any)
		return fmt.Sprint(m["operation"], "/", m["manager"], "/", m["apiVersion"], "/", m["subresource"])
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}
