package handlers

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// writeResult writes the result of a verb (an object, a list, or a Status)
// in the representation negotiated: the object itself, a Table, or
// PartialObjectMetadata.
func (s *Scope) writeResult(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, obj runtime.Object) {
	if _, isStatus := obj.(*metav1.Status); isStatus {
		out.Target = negotiation.TargetObject
	}
	converted, err := s.transform(r, out, obj)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeObject(w, r, out, code, converted)
}

// transform returns obj in the target representation.
func (s *Scope) transform(r *http.Request, out negotiation.Output, obj runtime.Object) (runtime.Object, error) {
	switch out.Target {
	case negotiation.TargetTable:
		return s.toTable(r, out, obj, true)
	case negotiation.TargetPartialObjectMetadata, negotiation.TargetPartialObjectMetadataList:
		return toPartialObjectMetadata(out, obj)
	}
	return obj, nil
}

// toTable converts obj (one object or a list) with the storage's
// TableConvertor and fills each row's object as ?includeObject asks:
// None, Metadata (the default) or Object.
func (s *Scope) toTable(r *http.Request, out negotiation.Output, obj runtime.Object, headers bool) (*metav1.Table, error) {
	convertor, ok := s.Storage.(rest.TableConvertor)
	if !ok {
		return nil, notAcceptableAs("Table")
	}
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "":
		include = metav1.IncludeMetadata
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
	default:
		return nil, badRequest("includeObject must be one of None, Metadata, or Object")
	}
	table, err := convertor.ConvertToTable(r.Context(), obj, &metav1.TableOptions{NoHeaders: !headers, IncludeObject: include})
	if err != nil {
		return nil, err
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		switch include {
		case metav1.IncludeNone:
			row.Object = runtime.RawExtension{}
		case metav1.IncludeMetadata:
			m, err := meta.Accessor(row.Object.Object)
			if err != nil {
				return nil, err
			}
			row.Object = runtime.RawExtension{Object: partialMetadata(out, m)}
		case metav1.IncludeObject:
			if o := row.Object.Object; o != nil {
				o.GetObjectKind().SetGroupVersionKind(s.Kind)
			}
		}
	}
	table.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("Table"))
	if out.TargetVersion == "v1beta1" {
		table.APIVersion = "meta.k8s.io/v1beta1"
	}
	return table, nil
}

func partialMetadata(out negotiation.Output, m metav1.Object) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{ObjectMeta: *metaCopy(m)}
	p.APIVersion, p.Kind = "meta.k8s.io/"+versionOr(out.TargetVersion), "PartialObjectMetadata"
	return p
}

func metaCopy(m metav1.Object) *metav1.ObjectMeta {
	if om, ok := m.(*metav1.ObjectMeta); ok {
		return om.DeepCopy()
	}
	return &metav1.ObjectMeta{
		Name: m.GetName(), GenerateName: m.GetGenerateName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion(), Generation: m.GetGeneration(), CreationTimestamp: m.GetCreationTimestamp(),
		DeletionTimestamp: m.GetDeletionTimestamp(), DeletionGracePeriodSeconds: m.GetDeletionGracePeriodSeconds(),
		Labels: m.GetLabels(), Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(),
		Finalizers: m.GetFinalizers(), ManagedFields: m.GetManagedFields(),
	}
}

func versionOr(v string) string {
	if v == "" {
		return "v1"
	}
	return v
}

// toPartialObjectMetadata keeps only the metadata of obj or of each item of
// a list.
func toPartialObjectMetadata(out negotiation.Output, obj runtime.Object) (runtime.Object, error) {
	if !meta.IsListType(obj) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		return partialMetadata(out, m), nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.APIVersion, list.Kind = "meta.k8s.io/"+versionOr(out.TargetVersion), "PartialObjectMetadataList"
	if lm, err := meta.ListAccessor(obj); err == nil {
		list.ResourceVersion, list.Continue, list.RemainingItemCount = lm.GetResourceVersion(), lm.GetContinue(), lm.GetRemainingItemCount()
	}
	err := meta.EachListItem(obj, func(item runtime.Object) error {
		m, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		p := partialMetadata(out, m)
		list.Items = append(list.Items, *p)
		return nil
	})
	return list, err
}

func notAcceptableAs(what string) error {
	return badRequest("the resource does not support the %s representation", what)
}
