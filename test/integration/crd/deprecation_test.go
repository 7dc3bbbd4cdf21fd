package crd

import (
	"net/http"
	"testing"
)

// TestDeprecatedVersionWarns: every request to a version the definition
// marks deprecated answers kube's Warning header (its own text, or kube's
// default naming the newest served version that is not deprecated); a
// request to a version that is not deprecated answers none.
func TestDeprecatedVersionWarns(t *testing.T) {
	t.Parallel()
	crd := crdFromFile(t, "widgets.yaml", group(t))
	twoVersions(crd)
	alpha := *crd.Spec.Versions[1].DeepCopy()
	custom := "widgets of v1alpha1 go away in 2027"
	alpha.Name, alpha.Deprecated, alpha.DeprecationWarning = "v1alpha1", true, &custom
	crd.Spec.Versions[1].Deprecated = true // v1beta1, kube's default text
	crd.Spec.Versions = append(crd.Spec.Versions, alpha)
	crd = createEstablished(t, crd)
	ns := namespace(t)
	g := crd.Spec.Group
	path := func(version string) string { return "/apis/" + g + "/" + version + "/namespaces/" + ns + "/widgets" }
	body := []byte(`{"apiVersion":"` + g + `/v1beta1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red"}}`)
	beta := `299 - "` + g + `/v1beta1 Widget is deprecated; use ` + g + `/v1 Widget"`
	cases := []struct {
		name, method, path string
		body               []byte
		code               int
		warning            string
	}{
		{"create at the deprecated version", http.MethodPost, path("v1beta1"), body, http.StatusCreated, beta},
		{"get at the deprecated version", http.MethodGet, path("v1beta1") + "/w", nil, http.StatusOK, beta},
		{"list at the deprecated version", http.MethodGet, path("v1beta1"), nil, http.StatusOK, beta},
		{"its own warning", http.MethodGet, path("v1alpha1") + "/w", nil, http.StatusOK, `299 - "` + custom + `"`},
		{"a version not deprecated", http.MethodGet, path("v1") + "/w", nil, http.StatusOK, ""},
		{"a missing object at the deprecated version", http.MethodGet, path("v1beta1") + "/none", nil, http.StatusNotFound, beta},
	}
	for _, c := range cases {
		r := send(t, c.method, c.path, "application/json", c.body)
		if r.code != c.code || r.header.Get("Warning") != c.warning {
			t.Errorf("%s: got %d, Warning %q; want %d, %q (%s)", c.name, r.code, r.header.Get("Warning"), c.code, c.warning, r.body)
		}
	}
}
