package admissionpolicy

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestApplyConfigurationOnCustomResources: an apply configuration of a
// MutatingAdmissionPolicy is merged into a custom resource with the
// structure of its definition's schema (kube's type converter of the
// definition), and the defaults of the schema are applied to the result.
func TestApplyConfigurationOnCustomResources(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := srv.CreateNamespace(t)
	group := strings.Trim(testserver.NamespaceName(t), "-") + ".policy.test"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"color": {Type: "string"},
							"size":  {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("7")}},
							"tags": {Type: "array", XListType: ptrTo("set"),
								Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
						}},
					}}}}},
		},
	}
	crds := apiextensionsclient.NewForConfigOrDie(srv.ClientConfig).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx(t), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	gadgets := dynamic.NewForConfigOrDie(srv.ClientConfig).Resource(gvr).Namespace(ns)

	p := mutatingPolicy(ns+"-gadgets", ns, admissionregistrationv1.Fail, admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
			Expression: `Object{spec: Object.spec{color: "blue", tags: ["audited"]}}`,
		},
	})
	p.Spec.MatchConstraints.ResourceRules = rules(group, "v1", "gadgets")
	installMutating(t, c, p)
	var got *unstructured.Unstructured
	eventually(t, "the mutation", func() error {
		obj := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]interface{}{"generateName": "g-"},
			"spec": map[string]interface{}{"color": "red", "tags": []interface{}{"new"}}}}
		var err error
		if got, err = gadgets.Create(ctx(t), obj, metav1.CreateOptions{}); err != nil {
			return err
		}
		if color, _, _ := unstructured.NestedString(got.Object, "spec", "color"); color != "blue" {
			return &unexpected{}
		}
		return nil
	})
	tags, _, _ := unstructured.NestedStringSlice(got.Object, "spec", "tags")
	size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
	// A set merges: the object's tag stays beside the configuration's.
	if strings.Join(tags, ",") != "new,audited" || size != 7 {
		t.Errorf("the gadget after the mutation: tags %v, size %d", tags, size)
	}
}

func ptrTo(s string) *string { return &s }
