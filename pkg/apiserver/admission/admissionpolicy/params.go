package admissionpolicy

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// params returns the parameter objects a binding refers to, as kube's
// CollectParams finds them: one nil parameter when the policy or the
// binding has none; the named object or those its selector picks, read
// from this server's storage of the paramKind. requestNamespace is where a
// namespaced paramRef without a namespace looks.
func (m *matcher) params(ctx context.Context, kind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, requestNamespace string) ([]runtime.Object, error) {
	if kind == nil || ref == nil {
		return []runtime.Object{nil}, nil
	}
	gvk := schema.FromAPIVersionAndKind(kind.APIVersion, kind.Kind)
	res, ok := m.resources.ForKind(gvk)
	if !ok {
		return nil, fmt.Errorf("paramKind kind `%v` not known", kind.String())
	}
	ns := ""
	if res.Namespaced {
		ns = ref.Namespace
		if ns == "" {
			ns = requestNamespace
		}
		if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	ctx = request.WithNamespace(ctx, ns)
	var params []runtime.Object
	switch {
	case ref.Name != "":
		if ref.Selector != nil {
			return nil, errors.New("paramRef.name and paramRef.selector are mutually exclusive")
		}
		obj, err := getParam(ctx, res.Storage, ref.Name)
		switch {
		case err == nil:
			params = []runtime.Object{obj}
		case apierrors.IsNotFound(err): // not yet there: parameterNotFoundAction decides
		default:
			return nil, err
		}
	case ref.Selector != nil:
		selector, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		if params, err = listParams(ctx, res.Storage, selector); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("one of name or selector must be provided")
	}
	if len(params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	for i, p := range params {
		params[i] = withKind(p, gvk)
	}
	return params, nil
}

// getParam reads a parameter from the cache, then from etcd when the
// cache has not seen it yet: a parameter created a moment before the
// request is found, as kube's plugin falls back to a live read.
func getParam(ctx context.Context, s rest.Storage, name string) (runtime.Object, error) {
	getter, ok := s.(rest.Getter)
	if !ok {
		return nil, fmt.Errorf("the paramKind's resource cannot be read")
	}
	obj, err := getter.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = getter.Get(ctx, name, &metav1.GetOptions{})
	}
	return obj, err
}

func listParams(ctx context.Context, s rest.Storage, selector labels.Selector) ([]runtime.Object, error) {
	lister, ok := s.(rest.Lister)
	if !ok {
		return nil, fmt.Errorf("the paramKind's resource cannot be listed")
	}
	list, err := lister.List(ctx, &metainternalversion.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	return decodeAll(s, list.Items)
}

// withKind returns p with its apiVersion and kind set (the storage's
// objects leave them empty, and CEL reads params.apiVersion): a copy,
// since the cache's objects are shared.
func withKind(p runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if p.GetObjectKind().GroupVersionKind() == gvk {
		return p
	}
	p = p.DeepCopyObject()
	p.GetObjectKind().SetGroupVersionKind(gvk)
	return p
}

// decodeAll decodes stored objects into st's type.
func decodeAll(st rest.Storage, items []*storage.Object) ([]runtime.Object, error) {
	out := make([]runtime.Object, len(items))
	for i, item := range items {
		out[i] = st.New()
		if err := item.Decode(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
