package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// List serves GET on a collection: a list, or a watch when the request's
// Info says so (?watch=true).
func (s *Scope) List(lister rest.Lister) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if info, ok := request.InfoFrom(r.Context()); ok && info.Verb == "watch" {
			watcher, ok := s.Storage.(rest.Watcher)
			if !ok {
				WriteError(w, r, apierrors.NewMethodNotSupported(s.Resource.GroupResource(), "watch"))
				return
			}
			s.serveWatch(w, r, watcher, "")
			return
		}
		opts, err := parseListOptions(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		ctx, _, _ := s.requestContext(r)
		out, err := s.mediaTypes().Output(r, s.outputTargets(negotiation.TargetPartialObjectMetadataList)...)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		res, err := lister.List(ctx, opts)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if isPlainJSON(out) {
			s.streamJSONList(w, r, res)
			return
		}
		if out.Target == negotiation.TargetObject && out.Protobuf() {
			s.streamProtobufList(w, r, res)
			return
		}
		list, err := s.decodeList(lister.NewList(), res)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		s.writeResult(w, r, out, http.StatusOK, list)
	}
}

// parseListOptions reads and validates the list options of a request's
// query (400 for what does not parse, 422 for invalid combinations).
func parseListOptions(r *http.Request) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// kube 1.37 turns a watch from "" or "0" into a WatchList: initial
	// events, then a bookmark ending them (when bookmarks are allowed).
	metainternalversion.SetListOptionsDefaults(opts, true)
	if errs := metainternalvalidation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return opts, nil
}

// streamJSONList writes a list from storage's encoded items, without
// decoding them and without buffering the response: each item's stored
// bytes are copied to the client as they are (compressed when the list is
// large and the client accepts gzip).
func (s *Scope) streamJSONList(w http.ResponseWriter, r *http.Request, res *storage.ListResult) {
	bw := newBodyWriter(w, r, negotiation.MediaTypeJSON, http.StatusOK)
	defer bw.Close()
	// Items are appended to one buffer, written out whenever it fills:
	// no allocation per item, and never the whole response in memory.
	const flushAt = 32 * 1024
	buf := make([]byte, 0, flushAt+4096)
	header, _ := listHeader(s.listKind(), res)
	buf = append(buf, header...)
	for i, item := range res.Items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = item.AppendJSON(buf, false)
		if len(buf) >= flushAt {
			if _, err := bw.Write(buf); err != nil {
				return // the client went away
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, "]}\n"...)
	bw.Write(buf)
}

// listHeader is `{"kind":...,"apiVersion":...,"metadata":{...},"items":[`
// for a list of kind listKind.
func listHeader(listKind schema.GroupVersionKind, res *storage.ListResult) ([]byte, error) {
	lm := metav1.ListMeta{Continue: res.Continue, RemainingItemCount: res.RemainingItemCount}
	if res.ResourceVersion != 0 {
		lm.ResourceVersion = strconv.FormatInt(res.ResourceVersion, 10)
	}
	meta, err := json.Marshal(lm)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":%q,"apiVersion":%q,"metadata":`, listKind.Kind, listKind.GroupVersion().String())
	b.Write(meta)
	b.WriteString(`,"items":[`)
	return b.Bytes(), nil
}

// listKind is the kind of the endpoint's lists: the one its list type
// names (a custom resource's list kind is its definition's), else the
// kind's with "List".
func (s *Scope) listKind() schema.GroupVersionKind {
	if l, ok := s.Storage.(rest.Lister); ok {
		if gvk := l.NewList().GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
			return gvk
		}
	}
	return s.Kind.GroupVersion().WithKind(s.Kind.Kind + "List")
}

// clearItemKind leaves a list item without TypeMeta, as kube's encoder
// writes typed items; unstructured items keep theirs, as in kube.
func clearItemKind(obj runtime.Object) {
	if _, ok := obj.(runtime.Unstructured); !ok {
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
}

// decodeList decodes a storage list into list (empty, of the resource's
// list type), for the representations that need objects (YAML, Table,
// ...).
func (s *Scope) decodeList(list runtime.Object, res *storage.ListResult) (runtime.Object, error) {
	items := make([]runtime.Object, 0, len(res.Items))
	for _, item := range res.Items {
		obj := s.Storage.New()
		if err := item.Decode(obj); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		clearItemKind(obj)
		items = append(items, obj)
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if res.ResourceVersion != 0 {
		lm.SetResourceVersion(strconv.FormatInt(res.ResourceVersion, 10))
	}
	lm.SetContinue(res.Continue)
	lm.SetRemainingItemCount(res.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(s.listKind())
	return list, nil
}
