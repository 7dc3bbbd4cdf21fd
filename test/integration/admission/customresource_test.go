package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// widgets defines, for the test, a namespaced custom resource (a group of
// its own) with a status subresource, and waits until it is served.
func widgets(t testing.TB) schema.GroupVersionResource {
	t.Helper()
	group := strings.Trim(testserver.NamespaceName(t), "-") + ".admission.test"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: ptr.To(true)},
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					}}}}},
		},
	}
	crds := apiextensionsclient.NewForConfigOrDie(config()).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx(t), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	eventually(t, func(int) error {
		_, err := dynamic.NewForConfigOrDie(config()).Resource(gvr).Namespace("default").List(ctx(t), metav1.ListOptions{})
		return err
	})
	return gvr
}

func widget(gvr schema.GroupVersionResource, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": gvr.GroupVersion().String(), "kind": "Widget",
		"metadata": map[string]interface{}{"name": name}, "spec": map[string]interface{}{"color": "red"}}}
	u.SetLabels(labels)
	return u
}

// TestCustomResources: webhooks admit custom resources as built-in ones:
// a patch is stored, a refusal is kube's Status, and a subresource is
// matched by its own rule (widgets/status).
func TestCustomResources(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	gvr := widgets(t)
	registerMutating(t, mutating("widgets.admission.test", w, "/mutate", ns, rule(gvr.Group, "*", []string{"widgets"}, admissionregistrationv1.Create)))
	deny := validating("deny.admission.test", w, "/deny", ns, rule(gvr.Group, "v1", []string{"widgets"}, admissionregistrationv1.Create))
	deny.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "deny"}}
	status := validating("status.admission.test", w, "/deny", ns, rule(gvr.Group, "v1", []string{"widgets/status"}, admissionregistrationv1.Update))
	registerValidating(t, deny, status)
	client := dynamic.NewForConfigOrDie(config()).Resource(gvr).Namespace(ns)
	var created *unstructured.Unstructured
	eventually(t, func(i int) error {
		var err error
		created, err = client.Create(ctx(t), widget(gvr, fmt.Sprintf("w%d", i), map[string]string{"app": "x"}), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if created.GetLabels()["mutated"] == "" {
			return fmt.Errorf("not mutated yet")
		}
		return nil
	})
	reviews := w.calls("/mutate")
	if req := reviews[len(reviews)-1].Request; req.Kind.Group != gvr.Group || req.Kind.Kind != "Widget" || req.Resource.Resource != "widgets" ||
		!strings.Contains(string(req.Object.Raw), `"spec":{"color":"red"}`) {
		t.Errorf("the review of a custom resource: %+v %s", req, req.Object.Raw)
	}
	_, err := client.Create(ctx(t), widget(gvr, "denied", map[string]string{"case": "deny"}), metav1.CreateOptions{})
	if err == nil || err.Error() != `admission webhook "deny.admission.test" denied the request: widgets are not welcome here` {
		t.Errorf("a refused custom resource: %v", err)
	}
	// The main resource's update passes; its status's is refused.
	created.Object["spec"] = map[string]interface{}{"color": "blue"}
	updated, err := client.Update(ctx(t), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated.Object["status"] = map[string]interface{}{"ready": true}
	_, err = client.UpdateStatus(ctx(t), updated, metav1.UpdateOptions{})
	if err == nil || !strings.Contains(err.Error(), `"status.admission.test"`) {
		t.Errorf("a status update: %v", err)
	}
	reviews = w.calls("/deny")
	if req := reviews[len(reviews)-1].Request; req.SubResource != "status" || req.Operation != "UPDATE" || len(req.OldObject.Raw) == 0 {
		t.Errorf("the review of a status update: %+v", req)
	}
}
