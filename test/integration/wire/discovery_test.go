package wire

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/discovery"
)

const (
	acceptAggregated        = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptAggregatedProto   = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptAggregatedV2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
)

// TestAggregatedDiscoveryGolden checks the aggregated documents of /api
// and /apis against golden files (regenerate with -update), and their
// headers against kube's.
func TestAggregatedDiscoveryGolden(t *testing.T) {
	for _, path := range []string{"/api", "/apis"} {
		t.Run(path, func(t *testing.T) {
			r := do(t, req{path: path, headers: []string{"Accept: " + acceptAggregated}})
			if r.code != http.StatusOK {
				t.Fatalf("got %d %s", r.code, r.body)
			}
			for name, want := range map[string]string{
				"Content-Type": acceptAggregated, "Vary": "Accept", "Cache-Control": "public",
			} {
				if got := r.header.Get(name); got != want {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
			// kube's ETag: the SHA-512 of the document's JSON without
			// kind and apiVersion, in upper-case hex, quoted.
			var list apidiscoveryv2.APIGroupDiscoveryList
			if err := json.Unmarshal(r.body, &list); err != nil {
				t.Fatal(err)
			}
			if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" {
				t.Errorf("TypeMeta: %+v", list.TypeMeta)
			}
			list.TypeMeta = metav1.TypeMeta{}
			unhashed, _ := json.Marshal(list)
			if want := strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(unhashed))); r.header.Get("ETag") != want {
				t.Errorf("ETag: got %s, want %s", r.header.Get("ETag"), want)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, r.body, "", "  "); err != nil {
				t.Fatal(err)
			}
			golden(t, "aggregated"+strings.ReplaceAll(path, "/", "_")+".json", indented.Bytes())
		})
	}
}

// TestAggregatedDiscoveryNegotiation checks which requests get the
// aggregated document, as kube 1.37 decides: any clause naming v2, in
// JSON, YAML or protobuf; v2beta1 is gone (406 when nothing else is
// acceptable); If-None-Match with the ETag is 304 without a body.
func TestAggregatedDiscoveryNegotiation(t *testing.T) {
	etag := do(t, req{path: "/apis", headers: []string{"Accept: " + acceptAggregated}}).header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	tests := []struct {
		name        string
		path        string
		headers     []string
		code        int
		contentType string
	}{
		{"json", "/apis", []string{"Accept: " + acceptAggregated}, 200, acceptAggregated},
		{"client-go's Accept", "/apis", []string{"Accept: " + acceptAggregated + ",application/json"}, 200, acceptAggregated},
		{"aggregated clause second", "/api", []string{"Accept: application/json, " + acceptAggregated}, 200, acceptAggregated},
		{"protobuf", "/api", []string{"Accept: " + acceptAggregatedProto}, 200, acceptAggregatedProto},
		{"yaml", "/apis", []string{"Accept: application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}, 200,
			"application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"profile=nopeer", "/apis", []string{"Accept: " + acceptAggregated + ";profile=nopeer"}, 200, acceptAggregated},
		{"unaggregated", "/apis", nil, 200, "application/json"},
		{"v2beta1 with a fallback", "/apis", []string{"Accept: " + acceptAggregatedV2beta1 + ",application/json"}, 200, "application/json"},
		{"v2beta1 alone", "/apis", []string{"Accept: " + acceptAggregatedV2beta1}, 406, "application/json"},
		{"a group's document is never aggregated", "/apis/apps", []string{"Accept: " + acceptAggregated + ",application/json"}, 200, "application/json"},
		{"not modified", "/apis", []string{"Accept: " + acceptAggregated, "If-None-Match: " + etag}, 304, ""},
		{"not modified in protobuf too", "/apis", []string{"Accept: " + acceptAggregatedProto, "If-None-Match: " + etag}, 304, ""},
		{"stale ETag", "/apis", []string{"Accept: " + acceptAggregated, `If-None-Match: "0"`}, 200, acceptAggregated},
		{"If-None-Match on the unaggregated document", "/apis", []string{"If-None-Match: " + etag}, 200, "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, req{path: tc.path, headers: tc.headers})
			if r.code != tc.code || r.header.Get("Content-Type") != tc.contentType {
				t.Fatalf("got %d %q, want %d %q: %.300s", r.code, r.header.Get("Content-Type"), tc.code, tc.contentType, r.body)
			}
			if tc.code == http.StatusNotModified && (len(r.body) != 0 || r.header.Get("ETag") != etag) {
				t.Errorf("304 with body %q, ETag %q", r.body, r.header.Get("ETag"))
			}
			if tc.code == 406 {
				want := "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf\",\n  \"reason\": \"NotAcceptable\",\n  \"code\": 406\n}"
				if string(r.body) != want {
					t.Errorf("body:\n got %s\nwant %s", r.body, want)
				}
			}
		})
	}
}

// TestAggregatedDiscoveryProtobuf decodes the protobuf document and
// checks it says what the JSON one does.
func TestAggregatedDiscoveryProtobuf(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apidiscoveryv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	for _, path := range []string{"/api", "/apis"} {
		pb := do(t, req{path: path, headers: []string{"Accept: " + acceptAggregatedProto}})
		js := do(t, req{path: path, headers: []string{"Accept: " + acceptAggregated}})
		info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		obj, _, err := info.Serializer.Decode(pb.body, nil, &apidiscoveryv2.APIGroupDiscoveryList{})
		if err != nil {
			t.Fatalf("%s: decoding protobuf: %v", path, err)
		}
		var fromJSON apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(js.body, &fromJSON); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(obj)
		want, _ := json.Marshal(&fromJSON)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: protobuf and JSON differ:\n%s\n%s", path, got, want)
		}
	}
}

// TestAggregatedMatchesUnaggregated checks that both forms list the same
// resources, verbs and kinds (they are built from the same endpoints), and
// that client-go's discovery client, which asks for the aggregated form,
// finds what the legacy client finds.
func TestAggregatedMatchesUnaggregated(t *testing.T) {
	client := discovery.NewDiscoveryClientForConfigOrDie(srv.ClientConfig)
	_, aggregated, err := client.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	_, legacy, err := client.WithLegacy().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	summary := func(lists []*metav1.APIResourceList) []string {
		var out []string
		for _, l := range lists {
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") {
					// client-go gives an aggregated subresource the
					// singular name of its resource.
					r.SingularName = ""
				}
				out = append(out, fmt.Sprintf("%s %s namespaced=%v kind=%s/%s/%s singular=%s verbs=%v short=%v categories=%v",
					l.GroupVersion, r.Name, r.Namespaced, r.Group, r.Version, r.Kind, r.SingularName, r.Verbs, r.ShortNames, r.Categories))
			}
		}
		sort.Strings(out)
		return out
	}
	got, want := summary(aggregated), summary(legacy)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("aggregated:\n%s\nunaggregated:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) < 40 {
		t.Errorf("only %d resources discovered", len(got))
	}
}

// TestAggregatedAsKube checks entries against what kube-apiserver v1.37
// serves for the same resources (subresources, response kinds, scope).
func TestAggregatedAsKube(t *testing.T) {
	want := map[string]string{
		"/api v1 replicationcontrollers": `{"resource":"replicationcontrollers","responseKind":{"group":"","version":"","kind":"ReplicationController"},"scope":"Namespaced","singularResource":"replicationcontroller","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["rc"],"categories":["all"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},{"subresource":"status","responseKind":{"group":"","version":"","kind":"ReplicationController"},"verbs":["get","patch","update"]}]}`,
		"/api v1 namespaces":             `{"resource":"namespaces","responseKind":{"group":"","version":"","kind":"Namespace"},"scope":"Cluster","singularResource":"namespace","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["ns"],"subresources":[{"subresource":"finalize","responseKind":{"group":"","version":"","kind":"Namespace"},"verbs":["update"]},{"subresource":"status","responseKind":{"group":"","version":"","kind":"Namespace"},"verbs":["get","patch","update"]}]}`,
		"/apis apps/v1 deployments":      `{"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},{"subresource":"status","responseKind":{"group":"","version":"","kind":"Deployment"},"verbs":["get","patch","update"]}]}`,
	}
	for key, w := range want {
		path, rest, _ := strings.Cut(key, " ")
		gv, name, _ := strings.Cut(rest, " ")
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(do(t, req{path: path, headers: []string{"Accept: " + acceptAggregated}}).body, &list); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range list.Items {
			for _, v := range g.Versions {
				if strings.TrimPrefix(g.Name+"/"+v.Version, "/") != gv {
					continue
				}
				if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
					t.Errorf("%s: freshness %q", gv, v.Freshness)
				}
				for _, r := range v.Resources {
					if r.Resource == name {
						found = true
						if got, _ := json.Marshal(r); string(got) != w {
							t.Errorf("%s:\n got %s\nwant %s", key, got, w)
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: not served", key)
		}
	}
}
