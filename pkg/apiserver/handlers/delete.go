package handlers

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Delete serves DELETE on an object. Options come from the body (a
// DeleteOptions) and the query. The answer is as kube's: 200 with the
// object (or a Status naming it), 202 when the object stays and the client
// asked for cascading deletion with orphanDependents=false.
func (s *Scope) Delete(deleter rest.GracefulDeleter) http.HandlerFunc {
	return serveOrError(func(w http.ResponseWriter, r *http.Request) error {
		ctx, ns, name := s.requestContext(r)
		out, err := s.mediaTypes().Output(r, s.outputTargets(negotiation.TargetPartialObjectMetadata)...)
		if err != nil {
			return err
		}
		opts, err := s.deleteOptions(r)
		if err != nil {
			return err
		}
		if err := s.admitDelete(ctx, ns, name, opts); err != nil {
			return err
		}
		result, deleted, err := deleter.Delete(ctx, name, s.validation(Delete, ns, name, opts), opts)
		if err != nil {
			return err
		}
		code := http.StatusOK
		if !deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents { //nolint:staticcheck // kube's rule
			code = http.StatusAccepted
		}
		if result == nil {
			result = &metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusSuccess, Code: int32(code),
				Details: &metav1.StatusDetails{Name: name, Kind: s.Kind.Kind},
			}
		}
		s.writeResult(w, r, out, code, result)
		return nil
	})
}

// DeleteCollection serves DELETE on a collection: every object its list
// options select, each deleted as Delete would.
func (s *Scope) DeleteCollection(deleter rest.CollectionDeleter) http.HandlerFunc {
	return serveOrError(func(w http.ResponseWriter, r *http.Request) error {
		ctx, ns, _ := s.requestContext(r)
		out, err := s.mediaTypes().Output(r)
		if err != nil {
			return err
		}
		listOpts, err := parseListOptions(r)
		if err != nil {
			return err
		}
		opts, err := s.deleteOptions(r)
		if err != nil {
			return err
		}
		if err := s.admitDelete(ctx, ns, "", opts); err != nil {
			return err
		}
		result, err := deleter.DeleteCollection(ctx, s.validation(Delete, ns, "", opts), opts, listOpts)
		if err != nil {
			return err
		}
		if err := s.setListKind(result); err != nil {
			return err
		}
		s.writeResult(w, r, out, http.StatusOK, result)
		return nil
	})
}

// deleteOptions reads DeleteOptions from the body (JSON or YAML, any
// apiVersion kube accepts) or, when there is no body, from the query, and
// validates them. As kube's, one source only: the query's parameters are
// decoded into a whole DeleteOptions, so decoding them after the body
// would reset every field the body set and the query did not (a body's
// dryRun was lost to a labelSelector in the query, and the collection
// deleted for real).
func (s *Scope) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 {
		info, err := s.mediaTypes().Input(r)
		if err != nil {
			return nil, err
		}
		defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := info.Serializer.Decode(data, &defaultGVK, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != runtime.Object(opts) {
			return nil, apierrors.NewBadRequest("expected a DeleteOptions")
		}
	} else if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

// setListKind gives a list the kind of the resource's lists, and its items
// none, as kube's encoder writes lists.
func (s *Scope) setListKind(list runtime.Object) error {
	if !meta.IsListType(list) {
		return nil
	}
	list.GetObjectKind().SetGroupVersionKind(s.listKind())
	return meta.EachListItem(list, func(item runtime.Object) error {
		clearItemKind(item)
		return nil
	})
}
