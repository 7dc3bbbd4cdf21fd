package crd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
)

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// TestDiscovery: a definition's group and versions appear in discovery,
// unaggregated and aggregated, with kube's entries (golden bodies
// recorded from kube 1.37.2), the aggregated document's ETag changing;
// they go with the definition.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	code, body := do(t, http.MethodGet, "/apis/"+gvr.GroupVersion().String(), "", nil)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	// The storage version hash is that of the test's group.
	body = []byte(strings.ReplaceAll(string(body), discovery.StorageVersionHash(gvr.Group, "v1", "Widget"), "HASH"))
	checkGolden(t, "discovery-widgets-v1", body, gvr.Group, "")
	code, body = do(t, http.MethodGet, "/apis/"+gvr.Group, "", nil)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	checkGolden(t, "discovery-widgets", body, gvr.Group, "")

	entry, etag := aggregatedEntry(t, gvr.Group)
	if entry == nil {
		t.Fatalf("%s is not in the aggregated discovery", gvr.Group)
	}
	data, _ := json.Marshal(entry)
	checkGolden(t, "discovery-aggregated-widgets", data, gvr.Group, "")

	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(ctx(t), "widgets."+gvr.Group, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := pollUntil(t, func() bool {
		entry, newTag := aggregatedEntry(t, gvr.Group)
		code, _ := do(t, http.MethodGet, "/apis/"+gvr.GroupVersion().String(), "", nil)
		return entry == nil && newTag != etag && code == http.StatusNotFound
	})
	if err != nil {
		t.Errorf("discovery after the deletion: %v", err)
	}
}

// aggregatedEntry returns the entry of group in the aggregated /apis, and
// the document's ETag.
func aggregatedEntry(t testing.TB, group string) (map[string]interface{}, string) {
	t.Helper()
	r := send(t, http.MethodGet, "/apis", "", nil, "Accept", aggregatedAccept)
	var list struct {
		Items []map[string]interface{} `json:"items"`
	}
	if r.code != http.StatusOK || json.Unmarshal(r.body, &list) != nil {
		t.Fatalf("/apis: %d %s", r.code, r.body)
	}
	for _, item := range list.Items {
		if item["metadata"].(map[string]interface{})["name"] == group {
			return item, r.header.Get("Etag")
		}
	}
	return nil, r.header.Get("Etag")
}
