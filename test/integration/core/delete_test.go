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
