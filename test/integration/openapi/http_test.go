package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

const (
	v2Protobuf           = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	v2ProtobufDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	v3Protobuf           = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	v3ProtobufDeprecated = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

var etagPattern = regexp.MustCompile(`^"[0-9A-F]{128}"$`)

// sum is a document's hash as kube writes it in ETags and URLs.
func sum(data []byte) string { return fmt.Sprintf("%X", sha512.Sum512(data)) }

func TestV2(t *testing.T) {
	plain := get(t, "/openapi/v2", "Accept-Encoding: identity")
	if plain.code != http.StatusOK {
		t.Fatalf("GET /openapi/v2: %d %s", plain.code, plain.body)
	}
	etag := plain.header.Get("Etag")
	if etag != strconv.Quote(sum(plain.body)) {
		t.Errorf("ETag %s is not the SHA-512 of the body", etag)
	}
	var doc struct {
		Swagger     string                     `json:"swagger"`
		Info        map[string]string          `json:"info"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(plain.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" || doc.Info["title"] != "Kubernetes" || doc.Info["version"] != "1.37" || doc.Definitions["io.k8s.api.core.v1.Pod"] == nil {
		t.Errorf("document: swagger %q, info %v, %d definitions", doc.Swagger, doc.Info, len(doc.Definitions))
	}

	cases := []struct {
		name        string
		headers     []string
		method      string
		code        int
		contentType string
		check       func(t *testing.T, r response)
	}{
		{name: "json by default", code: 200, contentType: "application/json", check: func(t *testing.T, r response) {
			if !bytes.Equal(r.body, plain.body) {
				t.Error("body differs from the identity request's")
			}
		}},
		{name: "protobuf, the name kubectl asks for", headers: []string{"Accept: " + v2ProtobufDeprecated}, code: 200, contentType: v2Protobuf, check: wantV2Protobuf},
		{name: "protobuf", headers: []string{"Accept: " + v2Protobuf}, code: 200, contentType: v2Protobuf, check: wantV2Protobuf},
		{name: "preferred by q-value", headers: []string{"Accept: application/json;q=0.5, " + v2ProtobufDeprecated}, code: 200, contentType: v2Protobuf, check: wantV2Protobuf},
		{name: "any application type", headers: []string{"Accept: application/*"}, code: 200, contentType: "application/json"},
		{name: "not acceptable", headers: []string{"Accept: text/html"}, code: 406, check: wantEmpty},
		{name: "gzip", headers: []string{"Accept-Encoding: gzip"}, code: 200, contentType: "application/json", check: func(t *testing.T, r response) {
			if r.header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("Content-Encoding %q", r.header.Get("Content-Encoding"))
			}
			if got := gunzip(t, r.body); !bytes.Equal(got, plain.body) {
				t.Error("the gzipped body is not the document")
			}
		}},
		{name: "gzipped protobuf", headers: []string{"Accept: " + v2ProtobufDeprecated, "Accept-Encoding: gzip"}, code: 200, contentType: v2Protobuf, check: func(t *testing.T, r response) {
			wantV2Protobuf(t, response{body: gunzip(t, r.body)})
		}},
		{name: "not modified", headers: []string{"If-None-Match: " + etag}, code: 304, check: wantEmpty},
		{name: "modified", headers: []string{`If-None-Match: "0"`}, code: 200, contentType: "application/json"},
		{name: "range", headers: []string{"Range: bytes=0-16", "Accept-Encoding: gzip"}, code: 206, contentType: "application/json", check: func(t *testing.T, r response) {
			if string(r.body) != `{"swagger":"2.0",` {
				t.Errorf("body %q", r.body)
			}
		}},
		{name: "head", method: http.MethodHead, code: 200, contentType: "application/json", check: wantEmpty},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			r := request(t, method, "/openapi/v2", tc.headers...)
			if r.code != tc.code {
				t.Fatalf("code: got %d, want %d", r.code, tc.code)
			}
			if got := r.header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type: got %q, want %q", got, tc.contentType)
			}
			if got := r.header.Values("Vary"); strings.Join(got, ",") != "Accept-Encoding,Accept" {
				t.Errorf("Vary: got %v", got)
			}
			if got := r.header.Get("Cache-Control"); got != "no-cache, private" {
				t.Errorf("Cache-Control: got %q", got)
			}
			if tc.code == 200 && r.header.Get("Etag") != etag {
				t.Errorf("ETag: got %s, want that of the JSON", r.header.Get("Etag"))
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func wantV2Protobuf(t *testing.T, r response) {
	t.Helper()
	var doc openapiv2.Document
	if err := proto.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range doc.GetDefinitions().GetAdditionalProperties() {
		found = found || p.GetName() == "io.k8s.api.apps.v1.Deployment"
	}
	if doc.GetSwagger() != "2.0" || !found {
		t.Errorf("protobuf document: swagger %q, Deployment defined: %v", doc.GetSwagger(), found)
	}
}

func wantEmpty(t *testing.T, r response) {
	t.Helper()
	if len(r.body) != 0 {
		t.Errorf("want no body, got %d bytes", len(r.body))
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// index returns the /openapi/v3 index: document path -> URL.
func index(t *testing.T) map[string]string {
	t.Helper()
	r := get(t, "/openapi/v3")
	if r.code != http.StatusOK {
		t.Fatalf("GET /openapi/v3: %d %s", r.code, r.body)
	}
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, e := range idx.Paths {
		out[p] = e.ServerRelativeURL
	}
	return out
}

func TestV3Index(t *testing.T) {
	r := get(t, "/openapi/v3", "Accept: application/yaml")
	// kube's aggregator serves the index whatever Accept says, as text.
	if r.code != http.StatusOK || r.header.Get("Content-Type") != "text/plain; charset=utf-8" || r.header.Get("Etag") != "" {
		t.Errorf("GET /openapi/v3: %d, Content-Type %q, ETag %q", r.code, r.header.Get("Content-Type"), r.header.Get("Etag"))
	}
	idx := index(t)
	var paths []string
	for p, u := range idx {
		paths = append(paths, p)
		if want := "/openapi/v3/" + p + "?hash="; !strings.HasPrefix(u, want) || !etagPattern.MatchString(strconv.Quote(strings.TrimPrefix(u, want))) {
			t.Errorf("%s: URL %s", p, u)
		}
	}
	sort.Strings(paths)
	if got, want := strings.Join(paths, " "), servedPaths(t); got != want {
		t.Errorf("paths: got %s, want %s", got, want)
	}
}

func TestV3Documents(t *testing.T) {
	for p, u := range index(t) {
		t.Run(p, func(t *testing.T) {
			hash := strings.TrimPrefix(u, "/openapi/v3/"+p+"?hash=")
			r := get(t, u)
			if r.code != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("GET %s: %d %q", u, r.code, r.header.Get("Content-Type"))
			}
			if sum(r.body) != hash || r.header.Get("Etag") != strconv.Quote(hash) {
				t.Errorf("hash %s, ETag %s, SHA-512 of the body %s", hash, r.header.Get("Etag"), sum(r.body))
			}
			if r.header.Get("Cache-Control") != "public, immutable" {
				t.Errorf("Cache-Control %q", r.header.Get("Cache-Control"))
			}
			expires, err := time.Parse(time.RFC1123, r.header.Get("Expires"))
			if err != nil || time.Until(expires) < 364*24*time.Hour {
				t.Errorf("Expires %q: want a year from now (%v)", r.header.Get("Expires"), err)
			}
			var doc struct {
				OpenAPI string                     `json:"openapi"`
				Paths   map[string]json.RawMessage `json:"paths"`
			}
			if err := json.Unmarshal(r.body, &doc); err != nil || doc.OpenAPI != "3.0.0" || doc.Paths["/"+p+"/"] == nil {
				t.Errorf("document: openapi %q, %d paths, path /%s/ missing? (%v)", doc.OpenAPI, len(doc.Paths), p, err)
			}
		})
	}
}

func TestV3Exchange(t *testing.T) {
	u := index(t)["apis/apps/v1"]
	hash := strings.TrimPrefix(u, "/openapi/v3/apis/apps/v1?hash=")
	cases := []struct {
		name        string
		path        string
		headers     []string
		code        int
		contentType string
		cache       string
		check       func(t *testing.T, r response)
	}{
		{name: "without hash", path: "/openapi/v3/apis/apps/v1", code: 200, contentType: "application/json", cache: "no-cache, private"},
		{name: "wrong hash", path: "/openapi/v3/apis/apps/v1?hash=ABC", code: 301, contentType: "application/json", cache: "no-cache, private",
			check: func(t *testing.T, r response) {
				if loc := r.header.Get("Location"); loc != u {
					t.Errorf("Location: got %s, want %s", loc, u)
				}
				wantEmpty(t, r)
			}},
		{name: "protobuf", path: u, headers: []string{"Accept: " + v3Protobuf}, code: 200, contentType: v3Protobuf, cache: "public, immutable", check: wantV3Protobuf},
		{name: "protobuf, deprecated name", path: u, headers: []string{"Accept: " + v3ProtobufDeprecated}, code: 200, contentType: v3Protobuf, cache: "public, immutable", check: wantV3Protobuf},
		{name: "not acceptable", path: u, headers: []string{"Accept: application/yaml"}, code: 406, cache: "no-cache, private", check: wantEmpty},
		{name: "not modified", path: u, headers: []string{"If-None-Match: " + strconv.Quote(hash)}, code: 304, cache: "public, immutable", check: wantEmpty},
		{name: "no such document", path: "/openapi/v3/apis/example.com/v1", code: 404, cache: "no-cache, private", check: wantEmpty},
		{name: "no document named", path: "/openapi/v3/", code: 404, cache: "no-cache, private", check: wantEmpty},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, tc.path, tc.headers...)
			if r.code != tc.code {
				t.Fatalf("code: got %d, want %d (%s)", r.code, tc.code, r.body)
			}
			if got := r.header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type: got %q, want %q", got, tc.contentType)
			}
			if got := r.header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control: got %q, want %q", got, tc.cache)
			}
			if tc.code != 404 && tc.code != 406 && r.header.Get("Etag") != strconv.Quote(hash) {
				t.Errorf("ETag: got %q", r.header.Get("Etag"))
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func wantV3Protobuf(t *testing.T, r response) {
	t.Helper()
	var doc openapiv3.Document
	if err := proto.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range doc.GetComponents().GetSchemas().GetAdditionalProperties() {
		found = found || s.GetName() == "io.k8s.api.apps.v1.Deployment"
	}
	if doc.GetOpenapi() != "3.0.0" || !found {
		t.Errorf("protobuf document: openapi %q, Deployment defined: %v", doc.GetOpenapi(), found)
	}
}

// TestAuthentication: the documents are not public.
func TestAuthentication(t *testing.T) {
	client := srv.HTTPClient(t)
	for _, p := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
		req.Header.Set("Authorization", "Bearer not-a-token")
		resp, err := client.Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with a bad token: got %d, want 401", p, resp.StatusCode)
		}
	}
}
