package crd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi/route"
)

// v3Index returns the /openapi/v3 index: the URL of each document.
func v3Index(t testing.TB) map[string]string {
	t.Helper()
	code, body := do(t, http.MethodGet, "/openapi/v3", "", nil)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &index) != nil {
		t.Fatalf("/openapi/v3: %d %s", code, body)
	}
	out := map[string]string{}
	for p, e := range index.Paths {
		out[p] = e.ServerRelativeURL
	}
	return out
}

// TestOpenAPIDocuments: a definition's versions get their /openapi/v3
// document (listed in the index with its hash) and their paths and
// definitions in /openapi/v2, as kube's (golden document recorded from
// kube 1.37.2); an update changes the hash, a deletion removes them.
func TestOpenAPIDocuments(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	docPath := "apis/" + gvr.Group + "/v1"
	var url string
	if err := pollUntil(t, func() bool { url = v3Index(t)[docPath]; return url != "" }); err != nil || !strings.HasPrefix(url, "/openapi/v3/"+docPath+"?hash=") {
		t.Fatalf("index entry of %s: %q (%v)", docPath, url, err)
	}
	code, body := do(t, http.MethodGet, url, "", nil)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", url, code, body)
	}
	var doc map[string]interface{}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	// kube lists DeleteOptions under every group of its client scheme.
	schemas := doc["components"].(map[string]interface{})["schemas"].(map[string]interface{})
	delete(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"].(map[string]interface{}), "x-kubernetes-group-version-kind")
	normalized, _ := json.Marshal(doc)
	normalized = []byte(strings.ReplaceAll(string(normalized), reverseGroup(gvr.Group), "REVERSED-GROUP"))
	// Operation ids and tags name the group too, camel-cased.
	id, tags, _ := route.OperationIDAndTags(&route.Route{Operation: "getX", URL: "/apis/" + gvr.Group + "/v1"})
	normalized = []byte(strings.ReplaceAll(string(normalized), strings.TrimSuffix(strings.TrimPrefix(id, "get"), "V1X"), "CamelGroup"))
	normalized = []byte(strings.ReplaceAll(string(normalized), strings.TrimSuffix(tags[0], "_v1"), "camelGroup"))
	checkGolden(t, "openapi-v3-widgets", normalized, gvr.Group, "")

	code, v2 := do(t, http.MethodGet, "/openapi/v2", "", nil, "Accept", "application/json")
	kindDef := reverseGroup(gvr.Group) + ".v1.Widget"
	if code != http.StatusOK || !strings.Contains(string(v2), `"`+kindDef+`":{`) ||
		!strings.Contains(string(v2), `"/apis/`+gvr.Group+`/v1/namespaces/{namespace}/widgets/{name}/scale":{`) {
		t.Fatalf("/openapi/v2 lacks the definition %s or the paths: %d", kindDef, code)
	}

	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(ctx(t), "widgets."+gvr.Group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Description = "A widget."
	if _, err := crds.Update(ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pollUntil(t, func() bool { return v3Index(t)[docPath] != url }); err != nil {
		t.Errorf("the hash of %s after an update: %v", docPath, err)
	}
	if err := crds.Delete(ctx(t), crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = pollUntil(t, func() bool {
		_, listed := v3Index(t)[docPath]
		code, v2 := do(t, http.MethodGet, "/openapi/v2", "", nil, "Accept", "application/json")
		return !listed && code == http.StatusOK && !strings.Contains(string(v2), kindDef)
	})
	if err != nil {
		t.Errorf("the documents after the deletion: %v", err)
	}
}

// reverseGroup is a group as definition names have it
// ("com.example.stable").
func reverseGroup(group string) string {
	parts := strings.Split(group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}
