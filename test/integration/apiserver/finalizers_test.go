package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestFinalizers follows an object with a finalizer through its deletion,
// as kube-apiserver answers each step: the delete marks it (deletion
// timestamp, grace period 0) and answers it; a second delete changes
// nothing; updates may change it and remove finalizers, never add one;
// when the last finalizer goes, so does the object.
func TestFinalizers(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	r := do(t, req{method: http.MethodPost, path: path, body: `{"metadata":{"name":"held","finalizers":["example.com/x","example.com/y"]},"data":{"k":"v"}}`})
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	var deleted corev1.ConfigMap
	r = do(t, req{method: http.MethodDelete, path: path + "/held"})
	r.object(t, &deleted)
	if r.code != http.StatusOK || deleted.Kind != "ConfigMap" || deleted.DeletionTimestamp == nil ||
		deleted.DeletionGracePeriodSeconds == nil || *deleted.DeletionGracePeriodSeconds != 0 || len(deleted.Finalizers) != 2 {
		t.Fatalf("delete: %d %s", r.code, r.body)
	}
	t.Run("second delete changes nothing", func(t *testing.T) {
		var again corev1.ConfigMap
		r := do(t, req{method: http.MethodDelete, path: path + "/held"})
		r.object(t, &again)
		if r.code != http.StatusOK || again.ResourceVersion != deleted.ResourceVersion || !again.DeletionTimestamp.Equal(deleted.DeletionTimestamp) {
			t.Errorf("got %d %s", r.code, r.body)
		}
	})
	t.Run("adding a finalizer is refused", func(t *testing.T) {
		r := do(t, req{method: http.MethodPatch, path: path + "/held", headers: []string{"Content-Type: application/merge-patch+json"},
			body: `{"metadata":{"finalizers":["example.com/x","example.com/y","example.com/z"]}}`})
		r.wantStatus(t, 422, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"held\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/z\"}","reason":"Invalid","details":{"name":"held","kind":"ConfigMap","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/z\"}","field":"metadata.finalizers"}]},"code":422}`)
	})
	t.Run("other changes are allowed", func(t *testing.T) {
		var got corev1.ConfigMap
		r := do(t, req{method: http.MethodPatch, path: path + "/held", headers: []string{"Content-Type: application/merge-patch+json"},
			body: `{"data":{"k":"changed"},"metadata":{"finalizers":["example.com/y"]}}`})
		r.object(t, &got)
		if r.code != http.StatusOK || got.Data["k"] != "changed" || !slices.Equal(got.Finalizers, []string{"example.com/y"}) || !got.DeletionTimestamp.Equal(deleted.DeletionTimestamp) {
			t.Errorf("got %d %s", r.code, r.body)
		}
	})
	t.Run("removing the last finalizer deletes", func(t *testing.T) {
		var got corev1.ConfigMap
		r := do(t, req{method: http.MethodPatch, path: path + "/held", headers: []string{"Content-Type: application/merge-patch+json"},
			body: `{"metadata":{"finalizers":null}}`})
		r.object(t, &got)
		if r.code != http.StatusOK || got.Name != "held" || len(got.Finalizers) != 0 || got.DeletionTimestamp == nil {
			t.Errorf("got %d %s", r.code, r.body)
		}
		wantNotStored(t, ns, "held")
	})
}

// TestFinalizerNames checks kube's rule on finalizer names of core and
// apps objects (standard, or qualified with a domain), which leases do
// not have, with each error reported once.
func TestFinalizerNames(t *testing.T) {
	ns := namespace(t)
	createConfigMap(t, ns, "cm", nil)
	deployment := `{"metadata":{"name":"d","finalizers":["bar","example.com/ok"]},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	labelMsg := `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	cases := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"configmap create", http.MethodPost, "/api/v1/namespaces/" + ns + "/configmaps", `{"metadata":{"name":"f","finalizers":["foo"]}}`, 422,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"f\" is invalid: metadata.finalizers[0]: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified","reason":"Invalid","details":{"name":"f","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified","field":"metadata.finalizers[0]"}]},"code":422}`},
		{"deployment create", http.MethodPost, "/apis/apps/v1/namespaces/" + ns + "/deployments", deployment, 422,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Deployment.apps \"d\" is invalid: metadata.finalizers[0]: Invalid value: \"bar\": name is neither a standard finalizer name nor is it fully qualified","reason":"Invalid","details":{"name":"d","group":"apps","kind":"Deployment","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"bar\": name is neither a standard finalizer name nor is it fully qualified","field":"metadata.finalizers[0]"}]},"code":422}`},
		{"configmap update, errors once", http.MethodPatch, "/api/v1/namespaces/" + ns + "/configmaps/cm", `{"metadata":{"finalizers":["foo"],"labels":{"bad label":"x"}}}`, 422,
			fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"cm\" is invalid: [metadata.labels: Invalid value: \"bad label\": %s, metadata.finalizers[0]: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified]","reason":"Invalid","details":{"name":"cm","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"bad label\": %s","field":"metadata.labels"},{"reason":"FieldValueInvalid","message":"Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified","field":"metadata.finalizers[0]"}]},"code":422}`, labelMsg, labelMsg)},
		{"standard finalizers", http.MethodPost, "/api/v1/namespaces/" + ns + "/configmaps", `{"metadata":{"name":"std","finalizers":["orphan","kubernetes"]}}`, 201, ""},
		{"lease", http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases", `{"metadata":{"name":"l","finalizers":["foo"]}}`, 201, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rq := req{method: tc.method, path: tc.path, body: tc.body}
			if tc.method == http.MethodPatch {
				rq.headers = []string{"Content-Type: application/merge-patch+json"}
			}
			r := do(t, rq)
			if tc.want == "" {
				if r.code != tc.code {
					t.Errorf("got %d %s", r.code, r.body)
				}
				return
			}
			r.wantStatus(t, tc.code, tc.want)
		})
	}
}

// TestDeleteAccepted: a delete that asks for the dependents to go
// (orphanDependents false) and cannot finish at once answers 202, as
// kube's handler does; one that finishes answers 200.
func TestDeleteAccepted(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	if r := do(t, req{method: http.MethodPost, path: path, body: `{"metadata":{"name":"held","finalizers":["example.com/x"]}}`}); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	createConfigMap(t, ns, "free", nil)
	var got corev1.ConfigMap
	r := do(t, req{method: http.MethodDelete, path: path + "/held", body: `{"orphanDependents":false}`})
	r.object(t, &got)
	if r.code != http.StatusAccepted || got.DeletionTimestamp == nil || !slices.Equal(got.Finalizers, []string{"example.com/x"}) {
		t.Errorf("held: %d %s", r.code, r.body)
	}
	r = do(t, req{method: http.MethodDelete, path: path + "/free", body: `{"orphanDependents":false}`})
	if s := r.status(t); r.code != http.StatusOK || s.Status != "Success" || s.Details == nil || s.Details.Name != "free" {
		t.Errorf("free: %d %s", r.code, r.body)
	}
	do(t, req{method: http.MethodDelete, path: path + "/free", body: `{"orphanDependents":true,"propagationPolicy":"Orphan"}`}).wantStatus(t, 422,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"DeleteOptions","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set","field":"propagationPolicy"}]},"code":422}`)
}

// TestDeleteCollectionFinalizers: a collection delete marks the objects
// with finalizers and removes the others, answering the list of both as
// they were before; a second one answers the marked objects, unchanged.
func TestDeleteCollectionFinalizers(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	if r := do(t, req{method: http.MethodPost, path: path, body: `{"metadata":{"name":"held","labels":{"dc":"x"},"finalizers":["example.com/x"]}}`}); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	createConfigMap(t, ns, "free", map[string]string{"dc": "x"})
	var list corev1.ConfigMapList
	r := do(t, req{method: http.MethodDelete, path: path + "?labelSelector=dc%3Dx"})
	r.object(t, &list)
	if r.code != http.StatusOK || len(list.Items) != 2 || list.Items[0].DeletionTimestamp != nil {
		t.Fatalf("got %d %s", r.code, r.body)
	}
	wantNotStored(t, ns, "free")
	code, held := getConfigMap(t, ns, "held")
	if code != http.StatusOK || held.DeletionTimestamp == nil {
		t.Fatalf("held: %d %+v", code, held)
	}
	r = do(t, req{method: http.MethodDelete, path: path + "?labelSelector=dc%3Dx&propagationPolicy=Orphan"})
	r.object(t, &list)
	if r.code != http.StatusOK || len(list.Items) != 1 || list.Items[0].ResourceVersion != held.ResourceVersion ||
		!slices.Equal(list.Items[0].Finalizers, []string{"example.com/x"}) {
		t.Errorf("second delete: %d %s", r.code, r.body)
	}
}
