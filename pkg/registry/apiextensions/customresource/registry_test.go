package customresource_test

import (
	"testing"

	"go.uber.org/goleak"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions/customresource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// widgets is a namespaced kind with status and scale subresources.
var widgets = &apiextensionsv1.CustomResourceDefinition{
	ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
	Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
		Scope: apiextensionsv1.NamespaceScoped,
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"replicas": {Type: "integer"}, "color": {Type: "string"},
					}},
					"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"replicas": {Type: "integer"}, "phase": {Type: "string"},
					}},
				},
			}},
			Subresources: &apiextensionsv1.CustomResourceSubresources{
				Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
				Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
			},
		}},
	},
	Status: apiextensionsv1.CustomResourceDefinitionStatus{
		AcceptedNames:  apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
		StoredVersions: []string{"v1"},
	},
}

func widget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	}}
}

func field(obj runtime.Object, path ...string) any {
	v, _, _ := unstructured.NestedFieldCopy(obj.(*unstructured.Unstructured).Object, path...)
	return v
}

// TestRegistry runs the registry's conformance suite on a custom
// resource served as the CRD controller serves it.
func TestRegistry(t *testing.T) {
	t.Parallel()
	served, err := customresource.Build(widgets, registrytest.NewGetter(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(served.Destroy)
	storages := served.Group.VersionedResourcesStorageMap["v1"]
	tr := registrytest.Tester{
		Storage: storages["widgets"].(registrytest.ResourceStorage),
		Valid: func(name string) runtime.Object {
			return widget(name, map[string]any{"replicas": int64(1), "color": "red"})
		},
		Invalid: func(name string) runtime.Object {
			return widget(name, map[string]any{"replicas": "many"})
		},
		Change: func(obj runtime.Object) {
			_ = unstructured.SetNestedField(obj.(*unstructured.Unstructured).Object, "blue", "spec", "color")
		},
		Status: &registrytest.StatusCheck{
			Storage: storages["widgets/status"].(rest.Updater),
			ChangeSpec: func(obj runtime.Object) {
				_ = unstructured.SetNestedField(obj.(*unstructured.Unstructured).Object, "green", "spec", "color")
			},
			ChangeStatus: func(obj runtime.Object) {
				_ = unstructured.SetNestedField(obj.(*unstructured.Unstructured).Object, "Ready", "status", "phase")
			},
			Spec:   func(obj runtime.Object) any { return field(obj, "spec") },
			Status: func(obj runtime.Object) any { return field(obj, "status") },
		},
		Scale: &registrytest.ScaleCheck{
			Storage: storages["widgets/scale"].(interface {
				rest.Getter
				rest.Updater
			}),
			Replicas: func(obj runtime.Object) int32 {
				n, _ := field(obj, "spec", "replicas").(int64)
				return int32(n)
			},
		},
	}
	tr.Run(t)
}
