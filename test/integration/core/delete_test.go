package core

import (
	"net/http"
	"testing"
)

// TestDeleteReturns: a delete answers with the deleted object for the
// resources kube-apiserver returns it for, with a Status for the others.
func TestDeleteReturns(t *testing.T) {
	ns := namespace(t)
	cases := []struct {
		resource, name, body, wantKind string
	}{
		{"serviceaccounts", "sa", `{"metadata":{"name":"sa"}}`, "ServiceAccount"},
		{"resourcequotas", "rq", `{"metadata":{"name":"rq"},"spec":{"hard":{"pods":"1"}}}`, "ResourceQuota"},
		{"configmaps", "cm", `{"metadata":{"name":"cm"}}`, "Status"},
	}
	for _, tc := range cases {
		t.Run(tc.resource, func(t *testing.T) {
			path := "/api/v1/namespaces/" + ns + "/" + tc.resource
			if r := do(t, http.MethodPost, path, tc.body); r.code != http.StatusCreated {
				t.Fatalf("create: %d %s", r.code, r.body)
			}
			var meta struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
				Details struct {
					Name string `json:"name"`
				} `json:"details"`
			}
			r := do(t, http.MethodDelete, path+"/"+tc.name, nil)
			if r.code != http.StatusOK {
				t.Fatalf("delete: %d %s", r.code, r.body)
			}
			r.decode(t, &meta)
			if meta.Kind != tc.wantKind || (meta.Metadata.Name == "" && meta.Details.Name == "") {
				t.Errorf("delete answered %s", r.body)
			}
		})
	}
}

// TestDeleteOptionsFromBody: with a DeleteOptions body, kube reads the
// options from it alone; the query (a deletecollection's label selector,
// say) does not reset them. A dry run in the body deletes nothing, as
// controller-runtime's DeleteAllOf(DryRunAll) expects.
func TestDeleteOptionsFromBody(t *testing.T) {
	ns := namespace(t)
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for _, name := range []string{"a", "b"} {
		body := `{"metadata":{"name":"` + name + `","labels":{"dry":"run"}}}`
		if r := do(t, http.MethodPost, base, body); r.code != http.StatusCreated {
			t.Fatalf("create: %d %s", r.code, r.body)
		}
	}
	for _, tc := range []struct{ name, path string }{
		{"deletecollection", base + "?labelSelector=dry%3Drun"},
		{"delete", base + "/a?gracePeriodSeconds=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := do(t, http.MethodDelete, tc.path, `{"dryRun":["All"]}`); r.code != http.StatusOK {
				t.Fatalf("delete: %d %s", r.code, r.body)
			}
			for _, name := range []string{"a", "b"} {
				if r := do(t, http.MethodGet, base+"/"+name, nil); r.code != http.StatusOK {
					t.Errorf("after a dry run, get %s: %d %s", name, r.code, r.body)
				}
			}
		})
	}
}
