package apiextensions_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// newCRD is a valid definition whose plural is name, in example.com.
func newCRD(name string) *apiextensionsv1.CustomResourceDefinition {
	kind := "K" + strings.ReplaceAll(name, "-", "")
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: name, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
			}},
		},
	}
}

// TestRegistry runs the registry's conformance suite on CRDs: a delete
// only marks a definition (kube's PrepareForDelete adds the cleanup
// finalizer), and the CRD controller, through /status, removes the
// finalizer once the custom resources are gone.
func TestRegistry(t *testing.T) {
	t.Parallel()
	info := registrytest.BuildGroup(t, apiextensions.NewRESTStorageProvider())
	status := registrytest.Storage(t, info, "customresourcedefinitions/status").(interface {
		rest.Getter
		rest.Updater
	})
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "customresourcedefinitions").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return newCRD(name) },
		Invalid: func(name string) runtime.Object {
			crd := newCRD(name)
			crd.Spec.Scope = "Everywhere"
			return crd
		},
		NoGenerateName: true,
		Finish: func(ctx context.Context, name string) error {
			obj, err := status.Get(ctx, name, &metav1.GetOptions{})
			if err != nil {
				return err
			}
			crd := obj.(*apiextensionsv1.CustomResourceDefinition)
			crd.Finalizers = nil
			_, _, err = status.Update(ctx, name, &rest.DefaultUpdatedObjectInfo{Obj: crd}, nil, nil, false, &metav1.UpdateOptions{})
			return err
		},
		Status: &registrytest.StatusCheck{
			Storage: status,
			ChangeSpec: func(obj runtime.Object) {
				obj.(*apiextensionsv1.CustomResourceDefinition).Spec.Names.ShortNames = []string{"rtshort"}
			},
			ChangeStatus: func(obj runtime.Object) {
				crd := obj.(*apiextensionsv1.CustomResourceDefinition)
				crd.Status.AcceptedNames = crd.Spec.Names
				crd.Status.StoredVersions = []string{"v1"}
			},
		},
	}
	tr.Run(t)
}
