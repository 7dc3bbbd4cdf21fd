package reference

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// Step is one request of a transcript. NS in its path and body is the
// namespace of the transcript's test.
type Step struct {
	Name string
	Request
	// Settle makes a recording wait a moment before the step: kube's
	// admission plugins read informers, which may not have seen the
	// write of the step before yet.
	Settle bool
}

// settleTime is how long a recording waits for kube's informers.
const settleTime = time.Second

// Replay replays each transcript in a subtest of its own, in the
// namespace newNamespace makes for it (and the Normalizer of that
// namespace it returns), and compares every answer (code, whole body,
// warnings) with kube-apiserver's, recorded in file. A transcript's
// steps run in order: a step sees what the earlier ones wrote. With
// -record it writes the reference's answers into file instead.
func Replay(t *testing.T, tg *Target, file string, transcripts map[string][]Step, newNamespace func(t *testing.T, transcript string) *Normalizer) {
	want := map[string][]Answer{}
	if !*Record {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (record it with -record)", err)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]Answer{}
	names := make([]string, 0, len(transcripts))
	for name := range transcripts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			n := newNamespace(t, name)
			for i, st := range transcripts[name] {
				if st.Settle && *Record {
					time.Sleep(settleTime)
				}
				r := st.Request
				r.Path, r.Body = strings.ReplaceAll(r.Path, "NS", n.ns), strings.ReplaceAll(r.Body, "NS", n.ns)
				a := n.Answer(tg.Do(t, r))
				got[name] = append(got[name], a)
				if *Record {
					continue
				}
				if i >= len(want[name]) {
					t.Fatalf("step %s was not recorded (run with -record)", st.Name)
				}
				if w := want[name][i]; !reflect.DeepEqual(RoundTrip(t, a), w) {
					t.Errorf("step %d %s differs from kube's:\n got %s\nwant %s", i, st.Name, MustJSON(t, a), MustJSON(t, w))
				}
			}
		})
	}
	if *Record {
		data, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CreateNamespace creates namespace name on tg as userAgent. On the
// reference, which runs no controller manager, it creates the service
// account "default" too (pods need it).
func (tg *Target) CreateNamespace(t testing.TB, name, userAgent string) {
	t.Helper()
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
	if r := tg.Do(t, Request{Method: http.MethodPost, Path: "/api/v1/namespaces", ContentType: "application/json", UserAgent: userAgent, Body: ns}); r.Code != http.StatusCreated {
		t.Fatalf("creating namespace %s: %d %s", name, r.Code, r.Body)
	}
	if *Record {
		sa := `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`
		tg.Do(t, Request{Method: http.MethodPost, Path: "/api/v1/namespaces/" + name + "/serviceaccounts", ContentType: "application/json", UserAgent: userAgent, Body: sa})
	}
}

// FinalizeNamespaces finishes the deletion of namespaces on the
// reference, which runs no namespace controller (a no-op otherwise).
func (tg *Target) FinalizeNamespaces(t testing.TB, userAgent string, names ...string) {
	if !*Record {
		return
	}
	for _, ns := range names {
		finalize := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q},"spec":{"finalizers":[]}}`, ns)
		tg.Do(t, Request{Method: http.MethodPut, Path: "/api/v1/namespaces/" + ns + "/finalize", ContentType: "application/json", UserAgent: userAgent, Body: finalize})
	}
}

// DeleteAll deletes the objects of a collection whose names match
// (every one when match is nil), their finalizers removed first: the
// reference runs no controller that would remove them.
func (tg *Target) DeleteAll(t testing.TB, collection, userAgent string, match func(name string) bool) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name       string   `json:"name"`
				Finalizers []string `json:"finalizers"`
			} `json:"metadata"`
		} `json:"items"`
	}
	r := tg.Do(t, Request{Method: http.MethodGet, Path: collection, UserAgent: userAgent})
	if err := json.Unmarshal(r.Body, &list); err != nil {
		return
	}
	for _, item := range list.Items {
		if match != nil && !match(item.Metadata.Name) {
			continue
		}
		path := collection + "/" + item.Metadata.Name
		if len(item.Metadata.Finalizers) > 0 {
			tg.Do(t, Request{Method: http.MethodPatch, Path: path, ContentType: "application/merge-patch+json", UserAgent: userAgent, Body: `{"metadata":{"finalizers":null}}`})
		}
		tg.Do(t, Request{Method: http.MethodDelete, Path: path + "?gracePeriodSeconds=0&propagationPolicy=Background", UserAgent: userAgent})
	}
}
