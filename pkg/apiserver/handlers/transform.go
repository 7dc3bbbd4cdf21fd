package handlers

import (
	"fmt"
	"log/slog"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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

// writeWritten writes the result of a write as writeResult does, but
// when the answer is the object as the write stored it (compact JSON at
// the storage version: see rest.Written), it writes the stored bytes
// instead of encoding the result again. Not for custom resources: their
// encoder sorts metadata's keys, and the stored bytes carry the
// resourceVersion after the uid, where typed objects have it.
func (s *Scope) writeWritten(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, result runtime.Object, written *rest.Written) {
	if _, unstructured := result.(runtime.Unstructured); unstructured {
		written = nil
	}
	if stored := written.Stored(result); stored != nil && isPlainJSON(out) {
		writeBytes(w, r, out.MediaType, code, storedJSON(stored))
		return
	}
	s.writeResult(w, r, out, code, result)
}

// transform returns obj in the target representation.
func (s *Scope) transform(r *http.Request, out negotiation.Output, obj runtime.Object) (runtime.Object, error) {
	switch out.Target {
	case negotiation.TargetTable:
		include, err := tableIncludeObject(r)
		if err != nil {
			return nil, err
		}
		return s.toTable(r, out, obj, include, true)
	case negotiation.TargetPartialObjectMetadata, negotiation.TargetPartialObjectMetadataList:
		return toPartialObjectMetadata(s, out, obj)
	}
	return obj, nil
}

// tableIncludeObject reads and checks ?includeObject, as kube's
// TableOptions: None, Metadata (the default) or Object.
func tableIncludeObject(r *http.Request) (metav1.IncludeObjectPolicy, error) {
	opts := &metav1.TableOptions{IncludeObject: metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))}
	switch errs := metav1validation.ValidateTableOptions(opts); len(errs) {
	case 0:
	case 1:
		return "", badRequest("Unable to convert to Table as requested: %v", errs[0].Error())
	default:
		return "", badRequest("Unable to convert to Table as requested: %v", errs)
	}
	if opts.IncludeObject == "" {
		return metav1.IncludeMetadata, nil
	}
	return opts.IncludeObject, nil
}

// toTable converts obj (one object or a list) with the storage's
// TableConvertor and fills each row's object as include says. As kube's,
// the row of a bookmark ending the initial events of a watch keeps its
// metadata whatever include says (but Object).
func (s *Scope) toTable(r *http.Request, out negotiation.Output, obj runtime.Object, include metav1.IncludeObjectPolicy, headers bool) (*metav1.Table, error) {
	convertor, ok := s.Storage.(rest.TableConvertor)
	if !ok {
		return nil, notAcceptableAs("Table")
	}
	table, err := convertor.ConvertToTable(r.Context(), obj, &metav1.TableOptions{NoHeaders: !headers, IncludeObject: include})
	if err != nil {
		return nil, err
	}
	for i := range table.Rows {
		row := &table.Rows[i]
		o := row.Object.Object
		if o == nil {
			continue
		}
		m, err := s.objectMeta(o)
		if err != nil {
			return nil, err
		}
		switch {
		case include == metav1.IncludeObject:
			o.GetObjectKind().SetGroupVersionKind(s.Kind)
		case include == metav1.IncludeMetadata, m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true":
			row.Object = runtime.RawExtension{Object: partialMetadata(out, m)}
		default: // None
			row.Object = runtime.RawExtension{}
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

// toPartialObjectMetadata keeps only the metadata of obj
// (PartialObjectMetadata) or of each item of a list
// (PartialObjectMetadataList). Asking for the one that does not fit is
// 406, in kube's words (which name kube's internal Go type).
func toPartialObjectMetadata(s *Scope, out negotiation.Output, obj runtime.Object) (runtime.Object, error) {
	isList := meta.IsListType(obj)
	switch {
	case out.Target == negotiation.TargetPartialObjectMetadata && isList:
		return nil, negotiation.NotAcceptable(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (*%sList)", internalTypeName(s.Kind)))
	case out.Target == negotiation.TargetPartialObjectMetadataList && !isList:
		return nil, negotiation.NotAcceptable(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (*%s)", internalTypeName(s.Kind)))
	}
	if !isList {
		m, err := s.objectMeta(obj)
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
		m, err := s.objectMeta(item)
		if err != nil {
			return err
		}
		p := partialMetadata(out, m)
		list.Items = append(list.Items, *p)
		return nil
	})
	return list, err
}

// objectMeta is the metadata a metadata view of obj shows: its stored
// form's when the storage serves another version (rest.StoredMetadataReader).
func (s *Scope) objectMeta(obj runtime.Object) (metav1.Object, error) {
	if r, ok := s.Storage.(rest.StoredMetadataReader); ok {
		return r.StoredMetadata(obj)
	}
	return meta.Accessor(obj)
}

// logTransformError reports a representation a watch event could not be
// converted to; the event goes out as the object itself, as in kube.
func logTransformError(obj runtime.Object, err error) {
	slog.Error("apiserver: converting a watch event", "type", typeName(obj), "error", err)
}

func notAcceptableAs(what string) error {
	return badRequest("the resource does not support the %s representation", what)
}
