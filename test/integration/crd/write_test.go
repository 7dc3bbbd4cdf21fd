package crd

import (
	"bytes"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWriteAnswersAsEncoded: the JSON answer of a create and an update of
// a custom resource is what the unstructured encoder writes for the
// object it names (metadata's keys sorted, resourceVersion before uid),
// as kube's.
func TestWriteAnswersAsEncoded(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	gvr := widgets(t)
	path := "/apis/" + gvr.GroupVersion().String() + "/namespaces/" + ns + "/widgets"
	body, err := widget(t, gvr, "w1", "{color: red}").MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	code, created := do(t, http.MethodPost, path, "application/json", body)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, created)
	}
	obj := sameAsEncoded(t, "create", created)
	obj.SetLabels(map[string]string{"written": "put"})
	body, err = obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	code, updated := do(t, http.MethodPut, path+"/w1", "application/json", body)
	if code != http.StatusOK {
		t.Fatalf("update: %d %s", code, updated)
	}
	if sameAsEncoded(t, "update", updated).GetLabels()["written"] != "put" {
		t.Fatalf("the update's answer: %s", updated)
	}
}

// sameAsEncoded decodes body and fails unless encoding it again gives
// body back.
func sameAsEncoded(t *testing.T, what string, body []byte) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(body); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, body)
	}
	var encoded bytes.Buffer
	if err := unstructured.UnstructuredJSONScheme.Encode(obj, &encoded); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encoded.Bytes(), body) {
		t.Fatalf("%s: the answer\n%s\nis not what the encoder writes for it\n%s", what, body, encoded.Bytes())
	}
	return obj
}
