package crd

import (
	"net/http"
	"testing"
)

// TestDryRun checks that no verb on a custom resource writes when asked
// for a dry run, in the query or, for deletions, in the body (the body's
// DeleteOptions are the options whatever else the query carries, as
// kube's), with and without selectors.
func TestDryRun(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	gvr := widgets(t)
	coll := "/apis/" + gvr.GroupVersion().String() + "/namespaces/" + ns + "/widgets"
	w := widget(t, gvr, "keep", "{color: red}")
	w.SetLabels(map[string]string{"app": "dd"})
	body, err := w.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	code, created := do(t, http.MethodPost, coll, "application/json", body)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, created)
	}
	rv := object(t, string(created)).GetResourceVersion()
	newBody, _ := widget(t, gvr, "new", "{color: blue}").MarshalJSON()
	const deleteBody = `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`
	cases := []struct {
		name, method, path, contentType string
		body                            []byte
	}{
		{"create", http.MethodPost, coll + "?dryRun=All", "application/json", newBody},
		{"update", http.MethodPut, coll + "/keep?dryRun=All", "application/json", created},
		{"merge patch", http.MethodPatch, coll + "/keep?dryRun=All", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"x":"y"}}}`)},
		{"delete in the query", http.MethodDelete, coll + "/keep?dryRun=All", "", nil},
		{"delete in the body", http.MethodDelete, coll + "/keep?gracePeriodSeconds=0", "application/json", []byte(deleteBody)},
		{"delete-collection in the query", http.MethodDelete, coll + "?dryRun=All&labelSelector=app%3Ddd", "", nil},
		{"delete-collection in the body", http.MethodDelete, coll, "application/json", []byte(deleteBody)},
		{"delete-collection in the body, label selector", http.MethodDelete, coll + "?labelSelector=app%3Ddd", "application/json", []byte(deleteBody)},
		{"delete-collection in the body, field selector", http.MethodDelete, coll + "?fieldSelector=metadata.name%3Dkeep", "application/json", []byte(deleteBody)},
	}
	for _, c := range cases {
		if code, got := do(t, c.method, c.path, c.contentType, c.body); code >= 300 {
			t.Errorf("%s: %d %s", c.name, code, got)
		}
		code, got := do(t, http.MethodGet, coll+"/keep", "", nil)
		if code != http.StatusOK || object(t, string(got)).GetResourceVersion() != rv {
			t.Fatalf("%s: the widget changed or went: %d %s", c.name, code, got)
		}
	}
	if code, _ := do(t, http.MethodGet, coll+"/new", "", nil); code != http.StatusNotFound {
		t.Errorf("a dry-run create stored the widget: %d", code)
	}
}
