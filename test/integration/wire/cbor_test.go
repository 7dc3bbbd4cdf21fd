package wire

import (
	"context"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
)

// kube 1.37 does not serve CBOR by default (its CBORServingAndStorage gate
// is off), and client-go 0.37 and kubectl 1.32 do not send it unless their
// ClientsAllowCBOR and ClientsPreferCBOR gates are turned on. So the server
// answers CBOR as kube does: 406 and 415, in kube's words.

// router406 is kube's router's refusal of an Accept naming nothing a route
// produces (indented: it cannot be written in what the client accepts).
func router406(types string) string {
	return "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"406: Not Acceptable\\n\\nAvailable representations: " +
		types + "\",\n  \"reason\": \"NotAcceptable\",\n  \"details\": {},\n  \"code\": 406\n}"
}

const (
	threeTypes     = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	streamingTypes = threeTypes + ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
	unknownBody    = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: ` +
		threeTypes + `","reason":"UnsupportedMediaType","code":415}` + "\n"
)

// TestCBORRefused checks every CBOR request kube refuses, byte for byte.
func TestCBORRefused(t *testing.T) {
	ns := namespace(t)
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	cborBody := []byte{0xa1, 0x64, 'k', 'i', 'n', 'd', 0x69, 'C', 'o', 'n', 'f', 'i', 'g', 'M', 'a', 'p'}
	tests := []struct {
		name string
		r    req
		code int
		body string
	}{
		{"get as CBOR", req{path: cms + "/kube-root-ca.crt", headers: []string{"Accept: application/cbor"}}, 406, router406(threeTypes)},
		{"list as CBOR", req{path: cms, headers: []string{"Accept: application/cbor"}}, 406, router406(streamingTypes)},
		{"watch as a CBOR sequence", req{path: cms + "?watch=true", headers: []string{"Accept: application/cbor-seq"}}, 406, router406(streamingTypes)},
		{"aggregated discovery as CBOR", req{path: "/api", headers: []string{"Accept: application/cbor;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}}, 406, router406(threeTypes)},
		{"/apis as CBOR", req{path: "/apis", headers: []string{"Accept: application/cbor"}}, 406,
			"{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"only the following media types are accepted: " + threeTypes + "\",\n  \"reason\": \"NotAcceptable\",\n  \"code\": 406\n}"},
		{"create from CBOR", req{method: "POST", path: cms, body: cborBody, headers: []string{"Content-Type: application/cbor"}}, 415, unknownBody},
		{"update from CBOR", req{method: "PUT", path: cms + "/kube-root-ca.crt", body: cborBody, headers: []string{"Content-Type: application/cbor"}}, 415, unknownBody},
		{"patch from CBOR", req{method: "PATCH", path: cms + "/kube-root-ca.crt", body: cborBody, headers: []string{"Content-Type: application/cbor"}}, 415,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}` + "\n"},
		{"apply from CBOR", req{method: "PATCH", path: cms + "/kube-root-ca.crt", body: cborBody, headers: []string{"Content-Type: application/apply-patch+cbor"}}, 415,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.r)
			if r.code != tc.code || string(r.body) != tc.body || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("got %d %q %s\nwant %d %s", r.code, r.header.Get("Content-Type"), r.body, tc.code, tc.body)
			}
		})
	}
	// client-go's dynamic client with CBOR allowed asks
	// "application/json;q=0.9,application/cbor;q=1": JSON it is.
	r := do(t, req{path: cms + "/kube-root-ca.crt", headers: []string{"Accept: application/json;q=0.9,application/cbor;q=1"}})
	if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("JSON as a fallback: %d %q", r.code, r.header.Get("Content-Type"))
	}
}

// TestCBORClientFallsBack runs client-go's dynamic client with CBOR
// allowed and preferred: its first CBOR body gets 415, after which it
// sends JSON, as against kube 1.37.
func TestCBORClientFallsBack(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.ClientsAllowCBOR, true)
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.ClientsPreferCBOR, true)
	ns := namespace(t)
	cfg, rec := recordedConfig()
	client := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	cm := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "cbor"}, "data": map[string]interface{}{"k": "v"},
	}}
	ctx := context.Background()
	_, err := client.Create(ctx, cm, metav1.CreateOptions{})
	if !apierrors.IsUnsupportedMediaType(err) {
		t.Fatalf("first create: %v, want 415", err)
	}
	created, err := client.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil || created.GetResourceVersion() == "" {
		t.Fatalf("second create: %v", err)
	}
	got, err := client.Get(ctx, "cbor", metav1.GetOptions{})
	if err != nil || got.Object["data"].(map[string]interface{})["k"] != "v" {
		t.Fatalf("get: %v %v", got, err)
	}
	posts := rec.find("/namespaces/" + ns + "/configmaps")
	if len(posts) != 3 || posts[0].code != http.StatusUnsupportedMediaType || posts[1].code != http.StatusCreated ||
		!strings.Contains(posts[2].accept, "application/cbor") || posts[2].contentType != "application/json" {
		t.Errorf("exchanges: %+v", posts)
	}
}
