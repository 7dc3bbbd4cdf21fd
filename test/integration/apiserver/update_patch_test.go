package apiserver

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestUpdate checks PUT: a stale resourceVersion is a conflict, a PUT of
// a missing configmap does not create it, the name in the body must be the
// URL's, and a PUT without resourceVersion applies unconditionally.
func TestUpdate(t *testing.T) {
	ns := namespace(t)
	cm := createConfigMap(t, ns, "a", nil)
	path := "/api/v1/namespaces/" + ns + "/configmaps/"
	cases := []struct {
		name, path, body string
		code             int
		want             string
	}{{
		name: "stale resourceVersion", path: path + "a", body: `{"metadata":{"name":"a","resourceVersion":"1"},"data":{"k":"x"}}`,
		code: 409,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"a","kind":"configmaps"},"code":409}`,
	}, {
		name: "name mismatch", path: path + "a", body: `{"metadata":{"name":"b"},"data":{"k":"x"}}`,
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the name of the object (b) does not match the name on the URL (a)","reason":"BadRequest","code":400}`,
	}, {
		name: "no create on update", path: path + "zz", body: `{"metadata":{"name":"zz"},"data":{"k":"x"}}`,
		code: 404,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"zz\" not found","reason":"NotFound","details":{"name":"zz","kind":"configmaps"},"code":404}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			do(t, req{method: "PUT", path: tc.path, body: tc.body}).wantStatus(t, tc.code, tc.want)
			wantUnchanged(t, cm)
			wantNotStored(t, ns, "zz")
			wantNotStored(t, ns, "b")
		})
	}
	t.Run("unconditional", func(t *testing.T) {
		r := do(t, req{method: "PUT", path: path + "a", body: `{"metadata":{"name":"a"},"data":{"k":"v2"}}`})
		if r.code != 200 {
			t.Fatalf("got %d %s", r.code, r.body)
		}
		var got corev1.ConfigMap
		r.object(t, &got)
		if got.Data["k"] != "v2" || got.ResourceVersion == cm.ResourceVersion || got.UID != cm.UID {
			t.Errorf("updated: %+v", got)
		}
	})
}

// TestPatch checks the three patch types and their failures, with the
// bodies kube writes, and that a failed patch changes nothing.
func TestPatch(t *testing.T) {
	ns := namespace(t)
	cm := createConfigMap(t, ns, "a", map[string]string{"x": "1"})
	path := "/api/v1/namespaces/" + ns + "/configmaps/a"
	const (
		jsonPatch  = "Content-Type: application/json-patch+json"
		mergePatch = "Content-Type: application/merge-patch+json"
		smp        = "Content-Type: application/strategic-merge-patch+json"
	)
	invalid := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}`
	failures := []struct {
		name, ctype, path, body string
		code                    int
		want                    string // exact body, or a prefix ending in "..."
	}{
		{name: "json patch test fails", ctype: jsonPatch, body: `[{"op":"test","path":"/data/k","value":"nope"}]`, code: 422, want: invalid},
		{name: "json patch removes a missing path", ctype: jsonPatch, body: `[{"op":"remove","path":"/data/missing"}]`, code: 422, want: invalid},
		{name: "json patch replaces under a missing parent", ctype: jsonPatch, body: `[{"op":"replace","path":"/nothere/x","value":"1"}]`, code: 422, want: invalid},
		{name: "json patch not a list", ctype: jsonPatch, body: `{"op":"add"}`, code: 400,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp","reason":"BadRequest","code":400}`},
		{name: "invalid JSON", ctype: mergePatch, body: `{"data":`, code: 400,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid JSON patch","reason":"BadRequest","code":400}`},
		{name: "resourceVersion precondition", ctype: mergePatch, body: `{"metadata":{"resourceVersion":"1"},"data":{"k":"v3"}}`, code: 409,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"a","kind":"configmaps"},"code":409}`},
		{name: "rename", ctype: mergePatch, body: `{"metadata":{"name":"other"}}`, code: 400,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the name of the object (other) does not match the name on the URL (a)","reason":"BadRequest","code":400}`},
		{name: "merge patch of the wrong type", ctype: mergePatch, body: `{"data":"x"}`, code: 422,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":" \"\" is invalid: patch: Invalid value: \"{\\\"apiVersion\\\":\\\"v1\\\",\\\"data\\\":\\\"x\\\",...`},
		{name: "strategic merge patch of the wrong type", ctype: smp, body: `{"data":"x"}`, code: 422,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":" \"\" is invalid: patch: Invalid value: \"map[data:x]\": cannot restore map from string","reason":"Invalid","details":{"causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"map[data:x]\": cannot restore map from string","field":"patch"}]},"code":422}`},
		{name: "strict unknown field", ctype: smp, path: path + "?fieldValidation=Strict", body: `{"bogus":1}`, code: 422,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":" \"\" is invalid: patch: Invalid value: \"map[bogus:1]\": strict decoding error: unknown field \"bogus\"","reason":"Invalid","details":{"causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"map[bogus:1]\": strict decoding error: unknown field \"bogus\"","field":"patch"}]},"code":422}`},
		{name: "missing object", ctype: smp, path: "/api/v1/namespaces/" + ns + "/configmaps/zz", body: `{"data":{"k2":"v"}}`, code: 404,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"zz\" not found","reason":"NotFound","details":{"name":"zz","kind":"configmaps"},"code":404}`},
		{name: "unsupported patch type", ctype: "Content-Type: text/plain", body: `{}`, code: 415,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}`},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			if p == "" {
				p = path
			}
			r := do(t, req{method: "PATCH", path: p, body: tc.body, headers: []string{tc.ctype}})
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				if r.code != tc.code || !strings.HasPrefix(string(r.body), prefix) {
					t.Errorf("got %d %s, want %d %s...", r.code, r.body, tc.code, prefix)
				}
			} else {
				r.wantStatus(t, tc.code, tc.want)
			}
			wantUnchanged(t, cm)
			wantNotStored(t, ns, "zz")
		})
	}

	successes := []struct {
		name, ctype, body string
		check             func(*corev1.ConfigMap) bool
	}{
		{"json patch", jsonPatch, `[{"op":"test","path":"/data/k","value":"v"},{"op":"add","path":"/data/j","value":"1"}]`,
			func(c *corev1.ConfigMap) bool { return c.Data["j"] == "1" && c.Data["k"] == "v" }},
		{"merge patch", mergePatch, `{"data":{"k":null,"m":"2"}}`,
			func(c *corev1.ConfigMap) bool {
				_, k := c.Data["k"]
				return !k && c.Data["m"] == "2" && c.Data["j"] == "1"
			}},
		{"strategic merge patch", smp, `{"metadata":{"labels":{"y":"2"}}}`,
			func(c *corev1.ConfigMap) bool { return c.Labels["x"] == "1" && c.Labels["y"] == "2" }},
	}
	for _, tc := range successes {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, req{method: "PATCH", path: path, body: tc.body, headers: []string{tc.ctype}})
			if r.code != http.StatusOK {
				t.Fatalf("got %d %s", r.code, r.body)
			}
			var got corev1.ConfigMap
			r.object(t, &got)
			if !tc.check(&got) {
				t.Errorf("patched: %+v", got)
			}
			if _, stored := getConfigMap(t, ns, "a"); stored.ResourceVersion != got.ResourceVersion {
				t.Errorf("stored rv %s, answered %s", stored.ResourceVersion, got.ResourceVersion)
			}
		})
	}
}
