package generic

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// List implements rest.Lister. A field selector that pins metadata.name
// reads one key instead of the whole range.
func (e *Store) List(ctx context.Context, options *metainternalversion.ListOptions) (*storage.ListResult, error) {
	pred, err := e.predicate(options)
	if err != nil {
		return nil, err
	}
	opts := storage.ListOptions{
		ResourceVersion:      options.ResourceVersion,
		ResourceVersionMatch: options.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            true,
	}
	key := e.keyRootFunc(ctx)
	if name, ok := pred.MatchesSingle(); ok {
		if k, err := e.keyFunc(ctx, name); err == nil {
			key, opts.Recursive = k, false
		}
	}
	res, err := e.storage.GetList(ctx, key, opts)
	if err != nil {
		return nil, interpretListError(err, e.qualifiedResource)
	}
	return res, nil
}

// Watch implements rest.Watcher. Errors ending the watch arrive as ERROR
// events carrying a Kubernetes Status error.
func (e *Store) Watch(ctx context.Context, options *metainternalversion.ListOptions) (storage.Watcher, error) {
	pred, err := e.predicate(options)
	if err != nil {
		return nil, err
	}
	pred.Limit, pred.Continue = 0, ""
	opts := storage.ListOptions{
		ResourceVersion:      options.ResourceVersion,
		ResourceVersionMatch: options.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            true,
		ProgressNotify:       options.AllowWatchBookmarks,
		SendInitialEvents:    options.SendInitialEvents,
	}
	key := e.keyRootFunc(ctx)
	if name, ok := pred.MatchesSingle(); ok {
		if k, err := e.keyFunc(ctx, name); err == nil {
			key, opts.Recursive = k, false
		}
	}
	w, err := e.storage.Watch(ctx, key, opts)
	if err != nil {
		return nil, interpretListError(err, e.qualifiedResource)
	}
	// ERROR events carry storage errors: the HTTP layer converts them with
	// InterpretWatchError as it writes them, so that events reach it
	// without another goroutine in between.
	return w, nil
}

// predicate builds the selection of a list or watch, rejecting field
// selectors on fields the resource does not expose (400, as kube).
func (e *Store) predicate(options *metainternalversion.ListOptions) (storage.SelectionPredicate, error) {
	label, field := options.LabelSelector, options.FieldSelector
	if label == nil {
		label = labels.Everything()
	}
	if field == nil {
		field = fields.Everything()
	}
	if e.fieldLabelConversionFunc != nil {
		converted, err := field.Transform(fields.TransformFunc(e.fieldLabelConversionFunc))
		if err != nil {
			return storage.SelectionPredicate{}, apierrors.NewBadRequest(err.Error())
		}
		field = converted
	} else {
		for _, req := range field.Requirements() {
			if !e.selectableFields[req.Field] {
				return storage.SelectionPredicate{}, apierrors.NewBadRequest(e.unknownFieldSelectorMessage(req.Field))
			}
		}
	}
	return storage.SelectionPredicate{
		Label:    label,
		Field:    field,
		GetAttrs: e.attrFunc,
		Limit:    options.Limit,
		Continue: options.Continue,
	}, nil
}

// unknownFieldSelectorMessage words the refusal of a field selector as
// kube does: resources with fields of their own say "field label not
// supported"; the others (only metadata.name and metadata.namespace) get
// apimachinery's default conversion's message.
func (e *Store) unknownFieldSelectorMessage(field string) string {
	if len(e.selectableFields) == 2 && e.selectableFields["metadata.name"] && e.selectableFields["metadata.namespace"] {
		return fmt.Sprintf("%q is not a known field selector: only %q, %q", field, "metadata.name", "metadata.namespace")
	}
	return fmt.Sprintf("field label not supported: %s", field)
}
