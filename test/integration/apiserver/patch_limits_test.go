package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestJSONPatchCopyLimit checks kube's bound on what a JSON patch's copy
// operations may add (3 MiB together): a 2.6 KB patch that copies a 1 KB
// map into itself 18 times (256 MiB were it applied) is refused with the
// json-patch library's message, as kube-apiserver refuses it, at once and
// without changing the object. Without the bound the server grew to
// gigabytes and never answered (the copies applied, the answer would be
// the validation's 422 naming the annotations).
func TestJSONPatchCopyLimit(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	cm := createConfigMap(t, ns, "copies", nil)
	annotations := map[string]string{}
	for i := range 10 {
		annotations[fmt.Sprintf("a%d", i)] = strings.Repeat("x", 100)
	}
	ops := []string{`{"op":"add","path":"/metadata/annotations","value":` + mustJSON(t, annotations) + `}`}
	for i := range 18 {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/c%d"}`, i))
	}
	r := do(t, req{method: "PATCH", path: "/api/v1/namespaces/" + ns + "/configmaps/copies",
		body: "[" + strings.Join(ops, ",") + "]", headers: []string{"Content-Type: application/json-patch+json"}})
	// kube answers a patch that fails to apply with the generic 422 of
	// NewGenericServerResponse, which drops the library's message.
	r.wantStatus(t, http.StatusUnprocessableEntity, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}`)
	wantUnchanged(t, cm)
}

// TestJSONPatchOperationsLimit checks kube's bound of 10,000 operations in
// one JSON patch: 413 with kube's message.
func TestJSONPatchOperationsLimit(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	cm := createConfigMap(t, ns, "ops", nil)
	ops := make([]string, 10001)
	for i := range ops {
		ops[i] = `{"op":"test","path":"/kind","value":"ConfigMap"}`
	}
	r := do(t, req{method: "PATCH", path: "/api/v1/namespaces/" + ns + "/configmaps/ops",
		body: "[" + strings.Join(ops, ",") + "]", headers: []string{"Content-Type: application/json-patch+json"}})
	if s := r.status(t); r.code != http.StatusRequestEntityTooLarge ||
		s.Message != "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001" {
		t.Errorf("got %d %s", r.code, r.body)
	}
	wantUnchanged(t, cm)
}

func mustJSON(t *testing.T, v interface{}) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
