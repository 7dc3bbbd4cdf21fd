package admissionpolicy

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// newAttributes returns the request as kube's admission libraries see
// it: a delete has the deleted object as its old object and none new.
func newAttributes(ctx context.Context, a handlers.Attributes, obj runtime.Object) admission.Attributes {
	object, old := obj, a.Old
	if a.Operation == handlers.Delete {
		object, old = nil, obj
	}
	ns := a.Namespace
	if a.Resource.GroupResource() == namespacesResource && a.Subresource == "" && a.Operation != handlers.Create {
		ns = a.Name // kube's request info names a namespace's own namespace
	}
	u, _ := request.UserFrom(ctx)
	return admission.NewAttributesRecord(object, old, a.Kind, ns, a.Name, a.Resource, a.Subresource,
		admission.Operation(a.Operation), a.Options, a.DryRun, u)
}

// versionedAttributes returns the objects of a as CEL reads them:
// unstructured, with their apiVersion and kind (this server's typed
// objects leave them empty), at kind, the kind the policy matched: the
// request's, or (matchPolicy Equivalent) another version's, to which
// they are converted as kube converts them.
func versionedAttributes(a admission.Attributes, kind schema.GroupVersionKind, resources *Resources) (*admission.VersionedAttributes, error) {
	objs := [2]runtime.Object{a.GetObject(), a.GetOldObject()}
	for i, o := range objs {
		if o == nil || reflect.ValueOf(o).IsNil() {
			objs[i] = nil
			continue
		}
		objKind := a.GetKind()
		if kind != a.GetKind() {
			converted, err := resources.convert(o, kind)
			if err != nil {
				return nil, err
			}
			o, objKind = converted, kind
		}
		u, err := unstructuredWithKind(o, objKind)
		if err != nil {
			return nil, err
		}
		objs[i] = u
	}
	return &admission.VersionedAttributes{Attributes: a, VersionedObject: admission.NewLazyObject(objs[0]),
		VersionedOldObject: admission.NewLazyObject(objs[1]), VersionedKind: kind}, nil
}

func unstructuredWithKind(obj runtime.Object, kind schema.GroupVersionKind) (runtime.Object, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		u.SetGroupVersionKind(kind)
	}
	return u, nil
}
