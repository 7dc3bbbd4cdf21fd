package reference

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// Steps builds the steps of transcripts, each request sent as UserAgent.
type Steps struct{ UserAgent string }

// Content types and Accept headers of transcript steps.
const (
	JSON       = "application/json"
	MergePatch = "application/merge-patch+json"
	Strategic  = "application/strategic-merge-patch+json"
	AsTable    = "application/json;as=Table;v=v1;g=meta.k8s.io"
)

// Request is a step of any method, content type and Accept header.
func (s Steps) Request(name, method, path, contentType, accept, body string) Step {
	return Step{Name: name, Request: Request{Method: method, Path: path, ContentType: contentType, Accept: accept, UserAgent: s.UserAgent, Body: body}}
}

// Create POSTs a JSON body.
func (s Steps) Create(name, path, body string) Step {
	return s.Request(name, http.MethodPost, path, JSON, "", body)
}

// Put PUTs a JSON body.
func (s Steps) Put(name, path, body string) Step {
	return s.Request(name, http.MethodPut, path, JSON, "", body)
}

// Patch sends a JSON merge patch.
func (s Steps) Patch(name, path, body string) Step {
	return s.Request(name, http.MethodPatch, path, MergePatch, "", body)
}

// Get reads as JSON.
func (s Steps) Get(name, path string) Step { return s.Request(name, http.MethodGet, path, "", "", "") }

// Table reads as a Table, as kubectl get does.
func (s Steps) Table(name, path string) Step {
	return s.Request(name, http.MethodGet, path, "", AsTable, "")
}

// Delete deletes with the server's default options.
func (s Steps) Delete(name, path string) Step {
	return s.Request(name, http.MethodDelete, path, "", "", "")
}

// TestNamespace creates a namespace for test t on tg, as userAgent (named
// uniquely when recording, so that a recording never meets an earlier
// one's objects). When the test ends, the objects of collections in it
// (paths with NS for the namespace) go, then the namespace.
func (tg *Target) TestNamespace(t *testing.T, userAgent string, collections ...string) string {
	t.Helper()
	name := testserver.NamespaceName(t)
	if *Record {
		name = fmt.Sprintf("%s-%d", name[:min(len(name), 40)], time.Now().UnixNano()%1e9)
	}
	tg.CreateNamespace(t, name, userAgent)
	t.Cleanup(func() {
		for _, c := range collections {
			tg.DeleteAll(t, strings.ReplaceAll(c, "NS", name), userAgent, nil)
		}
		tg.Do(t, Request{Method: http.MethodDelete, Path: "/api/v1/namespaces/" + name, UserAgent: userAgent})
		tg.FinalizeNamespaces(t, userAgent, name)
	})
	return name
}
