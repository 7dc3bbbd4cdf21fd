package apiserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestGetJSONIsTheWrittenObject: a JSON GET answers with the stored bytes
// (no decoding); they must be exactly what the create answered with, which
// went through the typed encoder, and a GET with a resourceVersion (from
// the cache) must say the same.
func TestGetJSONIsTheWrittenObject(t *testing.T) {
	ns := namespace(t)
	created := do(t, req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps",
		body: `{"metadata":{"name":"g","labels":{"a":"b"},"annotations":{"x":"y"}},"data":{"k":"v"},"binaryData":{"b":"aGk="}}`})
	if created.code != 201 {
		t.Fatalf("create: %d %s", created.code, created.body)
	}
	var cm corev1.ConfigMap
	created.object(t, &cm)
	for _, path := range []string{
		"/api/v1/namespaces/" + ns + "/configmaps/g",
		"/api/v1/namespaces/" + ns + "/configmaps/g?resourceVersion=" + cm.ResourceVersion,
	} {
		got := do(t, req{path: path})
		if got.code != 200 || string(got.body) != string(created.body) {
			t.Errorf("GET %s:\n got %d %s\nwant %s", path, got.code, got.body, created.body)
		}
	}
}
