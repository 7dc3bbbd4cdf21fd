package apiserver

import (
	"fmt"
	"net/http"
	"testing"
)

// dryRunBody is the DeleteOptions controller-runtime's DryRunAll sends.
const dryRunBody = `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`

// dryRunResource is a resource the dry-run cases run on: where its
// collection is, and an object of it with the label the selectors use.
type dryRunResource struct {
	name       string
	collection func(ns string) string
	object     func(name string) string
}

var dryRunResources = []dryRunResource{
	{
		name:       "configmaps",
		collection: func(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" },
		object: func(name string) string {
			return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","labels":{"app":"dd"}},"data":{"k":"v"}}`
		},
	},
	{
		name:       "deployments",
		collection: func(ns string) string { return "/apis/apps/v1/namespaces/" + ns + "/deployments" },
		object: func(name string) string {
			return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","labels":{"app":"dd"}},` +
				`"spec":{"selector":{"matchLabels":{"app":"dd"}},"template":{"metadata":{"labels":{"app":"dd"}},` +
				`"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`
		},
	},
}

// TestDryRun checks that no verb writes when asked for a dry run, whether
// the request says so in its query or, for deletions, in its body: the
// body's DeleteOptions are the options, whatever else the query carries
// (a delete-collection's selectors, say), as kube reads them. A dry-run
// delete-collection with a label selector in the query deleted for real
// (what controller-runtime's DeleteAllOf(..., DryRunAll) sends).
func TestDryRun(t *testing.T) {
	t.Parallel()
	for _, res := range dryRunResources {
		t.Run(res.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			coll := res.collection(ns)
			create := func(name string) string {
				t.Helper()
				r := do(t, req{method: "POST", path: coll, body: res.object(name)})
				if r.code != http.StatusCreated {
					t.Fatalf("creating %s: %d %s", name, r.code, r.body)
				}
				return resourceVersionOf(t, r)
			}
			rv := create("keep")
			cases := []struct {
				name string
				req  req
				code int
			}{
				{"create in the query", req{method: "POST", path: coll + "?dryRun=All", body: res.object("new")}, 201},
				{"update in the query", req{method: "PUT", path: coll + "/keep?dryRun=All", body: res.object("keep")}, 200},
				{"merge patch in the query", req{method: "PATCH", path: coll + "/keep?dryRun=All", body: `{"metadata":{"labels":{"x":"y"}}}`,
					headers: []string{"Content-Type: application/merge-patch+json"}}, 200},
				{"json patch in the query", req{method: "PATCH", path: coll + "/keep?dryRun=All", body: `[{"op":"add","path":"/metadata/labels/x","value":"y"}]`,
					headers: []string{"Content-Type: application/json-patch+json"}}, 200},
				{"apply in the query", req{method: "PATCH", path: coll + "/keep?dryRun=All&fieldManager=t", body: res.object("keep"),
					headers: []string{"Content-Type: application/apply-patch+yaml"}}, 200},
				{"delete in the query", req{method: "DELETE", path: coll + "/keep?dryRun=All"}, 200},
				{"delete in the body", req{method: "DELETE", path: coll + "/keep", body: dryRunBody}, 200},
				{"delete in the body, query options beside it", req{method: "DELETE", path: coll + "/keep?gracePeriodSeconds=0&propagationPolicy=Background", body: dryRunBody}, 200},
				{"delete-collection in the query", req{method: "DELETE", path: coll + "?dryRun=All"}, 200},
				{"delete-collection in the query, label selector", req{method: "DELETE", path: coll + "?dryRun=All&labelSelector=app%3Ddd"}, 200},
				{"delete-collection in the body", req{method: "DELETE", path: coll, body: dryRunBody}, 200},
				{"delete-collection in the body, label selector", req{method: "DELETE", path: coll + "?labelSelector=app%3Ddd", body: dryRunBody}, 200},
				{"delete-collection in the body, field selector", req{method: "DELETE", path: coll + "?fieldSelector=metadata.name%3Dkeep", body: dryRunBody}, 200},
				{"delete-collection in the body, both selectors", req{method: "DELETE", path: coll + "?labelSelector=app%3Ddd&fieldSelector=metadata.name%3Dkeep", body: dryRunBody}, 200},
			}
			for _, c := range cases {
				r := do(t, c.req)
				if r.code != c.code {
					t.Errorf("%s: got %d %s, want %d", c.name, r.code, r.body, c.code)
				}
				got := do(t, req{path: coll + "/keep"})
				if got.code != http.StatusOK || resourceVersionOf(t, got) != rv {
					t.Fatalf("%s: the object changed or went: %d %s", c.name, got.code, got.body)
				}
			}
			if r := do(t, req{path: coll + "/new"}); r.code != http.StatusNotFound {
				t.Errorf("a dry-run create stored the object: %d", r.code)
			}
		})
	}
}

// TestDeleteOptionsFromBody checks that the body's options are honoured
// when the query carries parameters too: its preconditions still guard the
// deletion.
func TestDeleteOptionsFromBody(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	cm := createConfigMap(t, ns, "pre", map[string]string{"app": "dd"})
	body := `{"preconditions":{"resourceVersion":"1"}}`
	r := do(t, req{method: "DELETE", path: path + "/pre?gracePeriodSeconds=0", body: body})
	if r.code != http.StatusConflict {
		t.Errorf("delete with a failing precondition in the body: got %d %s, want 409", r.code, r.body)
	}
	wantUnchanged(t, cm)
	r = do(t, req{method: "DELETE", path: path + "?labelSelector=app%3Ddd", body: body})
	if r.code != http.StatusConflict {
		t.Errorf("delete-collection with a failing precondition in the body: got %d %s, want 409", r.code, r.body)
	}
	wantUnchanged(t, cm)
}

// resourceVersionOf is the resourceVersion of the object a response holds.
func resourceVersionOf(t *testing.T, r response) string {
	t.Helper()
	var obj struct {
		Metadata struct{ ResourceVersion string }
	}
	r.object(t, &obj)
	if obj.Metadata.ResourceVersion == "" {
		t.Fatalf("no resourceVersion in %s", fmt.Sprint(string(r.body)))
	}
	return obj.Metadata.ResourceVersion
}
