package filters

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// TestNewRequestInfo checks the reading of paths against kube's
// RequestInfoFactory (cases from its tests and from kube-apiserver 1.37.2).
func TestNewRequestInfo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, url string
		want              request.Info
		longRunning       bool
	}{
		{"list", "GET", "/api/v1/namespaces/ns/configmaps",
			request.Info{IsResourceRequest: true, Verb: "list", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Parts: []string{"configmaps"}}, false},
		{"list all namespaces", "GET", "/api/v1/configmaps",
			request.Info{IsResourceRequest: true, Verb: "list", APIPrefix: "api", APIVersion: "v1", Resource: "configmaps", Parts: []string{"configmaps"}}, false},
		{"get", "GET", "/api/v1/namespaces/ns/configmaps/c",
			request.Info{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Name: "c", Parts: []string{"configmaps", "c"}}, false},
		{"a get of one object with watch=true stays a get", "GET", "/api/v1/namespaces/ns/configmaps/c?watch=true&timeoutSeconds=15",
			request.Info{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Name: "c", Parts: []string{"configmaps", "c"}}, false},
		{"watch", "GET", "/apis/apps/v1/namespaces/ns/deployments?watch=1",
			request.Info{IsResourceRequest: true, Verb: "watch", APIPrefix: "apis", APIGroup: "apps", APIVersion: "v1", Namespace: "ns", Resource: "deployments", Parts: []string{"deployments"}}, true},
		{"watch of one object by field selector", "GET", "/api/v1/namespaces/ns/configmaps?watch=true&fieldSelector=metadata.name%3Dc",
			request.Info{IsResourceRequest: true, Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Name: "c", Parts: []string{"configmaps"}, FieldSelector: "metadata.name=c"}, true},
		{"legacy watch path", "GET", "/api/v1/watch/namespaces/ns/configmaps/c",
			request.Info{IsResourceRequest: true, Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Name: "c", Parts: []string{"configmaps", "c"}}, true},
		{"a watch that does not parse is still a watch", "GET", "/api/v1/pods?watch=yes&limit=x",
			request.Info{IsResourceRequest: true, Verb: "watch", APIPrefix: "api", APIVersion: "v1", Resource: "pods", Parts: []string{"pods"}}, true},
		{"create", "POST", "/api/v1/namespaces/ns/pods",
			request.Info{IsResourceRequest: true, Verb: "create", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "pods", Parts: []string{"pods"}}, false},
		{"subresource", "PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale",
			request.Info{IsResourceRequest: true, Verb: "update", APIPrefix: "apis", APIGroup: "apps", APIVersion: "v1", Namespace: "ns", Resource: "deployments", Subresource: "scale", Name: "d", Parts: []string{"deployments", "d", "scale"}}, false},
		{"deletecollection", "DELETE", "/api/v1/namespaces/ns/pods?labelSelector=a%3Db",
			request.Info{IsResourceRequest: true, Verb: "deletecollection", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "pods", Parts: []string{"pods"}, LabelSelector: "a=b"}, false},
		{"patch", "PATCH", "/api/v1/nodes/n",
			request.Info{IsResourceRequest: true, Verb: "patch", APIPrefix: "api", APIVersion: "v1", Resource: "nodes", Name: "n", Parts: []string{"nodes", "n"}}, false},
		{"a namespace is its own namespace", "GET", "/api/v1/namespaces/ns",
			request.Info{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "namespaces", Name: "ns", Parts: []string{"namespaces", "ns"}}, false},
		{"namespace status", "PUT", "/api/v1/namespaces/ns/status",
			request.Info{IsResourceRequest: true, Verb: "update", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "namespaces", Subresource: "status", Name: "ns", Parts: []string{"namespaces", "ns", "status"}}, false},
		{"pod logs are long-running", "GET", "/api/v1/namespaces/ns/pods/p/log",
			request.Info{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "pods", Subresource: "log", Name: "p", Parts: []string{"pods", "p", "log"}}, true},
		{"exec by POST (SPDY) is a create", "POST", "/api/v1/namespaces/ns/pods/p/exec?command=ls",
			request.Info{IsResourceRequest: true, Verb: "create", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "pods", Subresource: "exec", Name: "p", Parts: []string{"pods", "p", "exec"}}, true},
		{"exec by GET (WebSocket) is a get", "GET", "/api/v1/namespaces/ns/pods/p/exec?command=ls",
			request.Info{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "pods", Subresource: "exec", Name: "p", Parts: []string{"pods", "p", "exec"}}, true},
		{"a proxied path is in the parts", "DELETE", "/api/v1/nodes/n/proxy/a/b",
			request.Info{IsResourceRequest: true, Verb: "delete", APIPrefix: "api", APIVersion: "v1", Resource: "nodes", Subresource: "proxy", Name: "n", Parts: []string{"nodes", "n", "proxy", "a", "b"}}, true},
		{"discovery", "GET", "/apis/apps/v1", request.Info{Verb: "get", APIPrefix: "apis"}, false},
		{"healthz", "GET", "/healthz", request.Info{Verb: "get"}, false},
		{"profile", "GET", "/debug/pprof/profile", request.Info{Verb: "get"}, true},
		{"other prefix", "POST", "/openid/v1/jwks/x", request.Info{Verb: "post"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.url, nil)
			got, err := NewRequestInfo(r)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Path = r.URL.Path
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tc.want)
			}
			if got.LongRunning() != tc.longRunning {
				t.Errorf("LongRunning() = %v, want %v", got.LongRunning(), tc.longRunning)
			}
		})
	}
}

// TestNewRequestInfoError: a verb by path without a resource cannot be
// read, as in kube (which answers 500).
func TestNewRequestInfoError(t *testing.T) {
	t.Parallel()
	if _, err := NewRequestInfo(httptest.NewRequest("GET", "/api/v1/watch", nil)); err == nil {
		t.Error("no error for /api/v1/watch")
	}
	rec := httptest.NewRecorder()
	WithRequestInfo(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/watch", nil))
	want := `Internal Server Error: "/api/v1/watch": failed to create RequestInfo: unable to determine kind and namespace from url, /api/v1/watch` + "\n"
	if rec.Code != 500 || rec.Body.String() != want {
		t.Errorf("got %d %q, want 500 %q", rec.Code, rec.Body.String(), want)
	}
}

// FuzzRequestInfo reads any method, path and query: never a panic, and a
// resource request always names its resource.
func FuzzRequestInfo(f *testing.F) {
	for _, seed := range []string{"/api/v1/namespaces/ns/pods/p/log?follow=true", "/apis/apps/v1/watch/deployments",
		"/api/v1/namespaces/ns/configmaps?watch=1&fieldSelector=metadata.name%3Dc", "/api/v1/watch", "//api//v1", "/apis/x/y/z/namespaces"} {
		f.Add("GET", seed)
	}
	f.Add("DELETE", "/api/v1/namespaces/ns/pods?labelSelector=a%3D%3D")
	f.Fuzz(func(t *testing.T, method, target string) {
		r, err := http.NewRequest(method, "http://h"+target, nil)
		if err != nil {
			return
		}
		info, err := NewRequestInfo(r)
		if err == nil && info.IsResourceRequest && info.Resource == "" && len(info.Parts) > 0 && info.Parts[0] != "" {
			t.Errorf("%s %s: a resource request without a resource: %+v", method, target, info)
		}
		_ = info.LongRunning()
	})
}
