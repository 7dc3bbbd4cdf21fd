package openapi

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// TestSchemasTypeConverter checks that the schemas are what server-side
// apply needs: a type converter builds from them and types a Deployment
// by its kind, and merges the lists of containers by name.
func TestSchemasTypeConverter(t *testing.T) {
	schemas, err := Schemas()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := managedfields.NewTypeConverter(schemas, false)
	if err != nil {
		t.Fatal(err)
	}
	deployment := func(image string, port int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: image, Ports: []corev1.ContainerPort{{ContainerPort: port}},
			}}}}},
		}
	}
	old, err := tc.ObjectToTyped(deployment("nginx", 80))
	if err != nil {
		t.Fatal(err)
	}
	updated, err := tc.ObjectToTyped(deployment("nginx:2", 80))
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := old.Compare(updated)
	if err != nil {
		t.Fatal(err)
	}
	// The container is a map entry keyed by name: only its image changed.
	if got := cmp.Modified.String(); got != `.spec.template.spec.containers[name="c"].image` {
		t.Errorf("modified fields: got %s", got)
	}
	if !cmp.Added.Empty() || !cmp.Removed.Empty() {
		t.Errorf("added %s, removed %s: want none", cmp.Added, cmp.Removed)
	}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	if _, err := tc.ObjectToTyped(svc); err != nil {
		t.Errorf("a Service with a named target port: %v", err)
	}
}

// TestDocuments checks facts of the documents that kubectl relies on, as
// kube-apiserver 1.37 serves them.
func TestDocuments(t *testing.T) {
	var v2 struct {
		Paths       map[string]map[string]json.RawMessage `json:"paths"`
		Definitions map[string]map[string]interface{}     `json:"definitions"`
	}
	data, err := fs.ReadFile(FS(), "v2.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v2); err != nil {
		t.Fatal(err)
	}
	container := v2.Definitions["io.k8s.api.core.v1.Container"]
	ports := container["properties"].(map[string]interface{})["ports"].(map[string]interface{})
	wantPorts := map[string]interface{}{
		"x-kubernetes-list-type":       "map",
		"x-kubernetes-list-map-keys":   []interface{}{"containerPort", "protocol"},
		"x-kubernetes-patch-merge-key": "containerPort",
		"x-kubernetes-patch-strategy":  "merge",
	}
	for k, want := range wantPorts {
		if got := ports[k]; !reflect.DeepEqual(got, want) {
			t.Errorf("Container.ports %s: got %v, want %v", k, got, want)
		}
	}
	if got := container["required"]; !reflect.DeepEqual(got, []interface{}{"name"}) {
		t.Errorf("Container required: got %v", got)
	}
	if got := v2.Definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"]; got != "int-or-string" {
		t.Errorf("IntOrString format: got %v", got)
	}
	gvk := v2.Definitions["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"]
	if want := []interface{}{map[string]interface{}{"group": "apps", "version": "v1", "kind": "Deployment"}}; !reflect.DeepEqual(gvk, want) {
		t.Errorf("Deployment gvk: got %v", gvk)
	}
	for path, ops := range map[string][]string{
		"/api/v1/namespaces/{namespace}/configmaps":                     {"get", "post", "delete", "parameters"},
		"/api/v1/namespaces/{namespace}/pods/{name}/status":             {"get", "put", "patch", "parameters"},
		"/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale": {"get", "put", "patch", "parameters"},
		"/apis/coordination.k8s.io/v1/watch/leases":                     {"get", "parameters"},
	} {
		if len(v2.Paths[path]) != len(ops) {
			t.Errorf("%s: got operations %v, want %v", path, keys(v2.Paths[path]), ops)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSchemasAreTheDocumentsDefinitions checks definitions.json against
// the /openapi/v3 documents: every definition of them, once, with the
// group version kinds of all of them.
func TestSchemasAreTheDocumentsDefinitions(t *testing.T) {
	var docs [][]byte
	err := fs.WalkDir(documents, "v3", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := documents.ReadFile(p)
		docs = append(docs, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Definitions(docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Schemas()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d definitions, want %d", len(got), len(want))
	}
	for name, w := range want {
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(got[name])
		if string(wj) != string(gj) {
			t.Errorf("%s: got %s\nwant %s", name, gj, wj)
		}
	}
}
