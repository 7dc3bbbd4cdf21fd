package generic

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// GetObject implements rest.ObjectGetter: the stored object converted to
// the served version's JSON.
func (s *VersionedStore) GetObject(ctx context.Context, name string, options *metav1.GetOptions) (*storage.Object, error) {
	obj, err := s.store.GetObject(ctx, name, options)
	if err != nil || s.servesStoredKind() {
		return obj, err
	}
	return s.convertObject(obj)
}

// servesStoredKind reports whether the version served is the kind the
// Store keeps (a custom resource's storage version): converting an object
// to its own kind changes nothing, so stored objects, list items and
// watch events go out as they are, without being decoded and encoded
// again.
func (s *VersionedStore) servesStoredKind() bool { return s.version.Kind == s.storageKind }

// List implements rest.Lister: each item is converted (decoded, converted,
// encoded) to the served version.
func (s *VersionedStore) List(ctx context.Context, options *metainternalversion.ListOptions) (*storage.ListResult, error) {
	options, err := s.listOptions(options)
	if err != nil {
		return nil, err
	}
	res, err := s.store.List(ctx, options)
	if err != nil || s.servesStoredKind() {
		return res, err
	}
	out := *res
	out.Items = make([]*storage.Object, len(res.Items))
	for i, item := range res.Items {
		if out.Items[i], err = s.convertObject(item); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// Watch implements rest.Watcher. An event shared by many watchers (the
// watch cache's) is converted once per served version: its Converted memo
// keeps the result, and the encodings of that result too.
func (s *VersionedStore) Watch(ctx context.Context, options *metainternalversion.ListOptions) (storage.Watcher, error) {
	options, err := s.listOptions(options)
	if err != nil {
		return nil, err
	}
	w, err := s.store.Watch(ctx, options)
	if err != nil || s.servesStoredKind() {
		return w, err
	}
	return &versionedWatcher{inner: w, s: s, stop: make(chan struct{})}, nil
}

// DeleteCollection implements rest.CollectionDeleter: the deleted objects
// come back at the served version.
func (s *VersionedStore) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	listOptions, err := s.listOptions(listOptions)
	if err != nil {
		return nil, err
	}
	list, err := s.store.DeleteCollection(ctx, s.validation(deleteValidation), options, listOptions)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	for i := range items {
		if items[i], err = s.toServed(items[i]); err != nil {
			return nil, err
		}
		if _, ok := items[i].(runtime.Unstructured); !ok {
			items[i].GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{}) // typed items carry no TypeMeta
		}
	}
	out := s.version.NewList()
	if err := meta.SetList(out, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	copyListMeta(out, list)
	return out, nil
}

// copyListMeta gives dst the list metadata of src (lists of any kind).
func copyListMeta(dst, src runtime.Object) {
	from, err := meta.ListAccessor(src)
	if err != nil {
		return
	}
	if to, err := meta.ListAccessor(dst); err == nil {
		to.SetResourceVersion(from.GetResourceVersion())
		to.SetContinue(from.GetContinue())
		to.SetRemainingItemCount(from.GetRemainingItemCount())
	}
}

// listOptions maps the field selector of a list at the served version to
// the Store's fields (400 with the version's message for a field it does
// not know).
func (s *VersionedStore) listOptions(options *metainternalversion.ListOptions) (*metainternalversion.ListOptions, error) {
	if s.version.FieldLabelConversion == nil || options == nil || options.FieldSelector == nil || options.FieldSelector.Empty() {
		return options, nil
	}
	selector, err := options.FieldSelector.Transform(fields.TransformFunc(s.version.FieldLabelConversion))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	options = options.DeepCopy()
	options.FieldSelector = selector
	return options, nil
}

// convertObject converts a stored object to the served version's JSON,
// keeping its key and revision.
func (s *VersionedStore) convertObject(o *storage.Object) (*storage.Object, error) {
	obj := s.store.New()
	if err := o.Decode(obj); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	served, err := s.toServed(obj)
	if err != nil {
		return nil, err
	}
	data, err := storage.Encode(served)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, err := storage.NewObject(o.Key, o.ResourceVersion, data)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// versionedWatcher converts the events of a Store's watch. It is a
// storage.Puller whatever the inner watcher is: Next takes the inner
// events in the caller's goroutine (straight from the watch cache's buffer
// when the inner watcher is a Puller), and ResultChan starts a goroutine
// only for a consumer that asks for a channel.
type versionedWatcher struct {
	inner storage.Watcher
	s     *VersionedStore

	// failed: a conversion failed and its ERROR event was delivered: the
	// watch is over. Only the consumer's goroutine touches it.
	failed bool

	chOnce   sync.Once
	ch       chan storage.Event
	stop     chan struct{}
	stopOnce sync.Once
}

var _ storage.Puller = (*versionedWatcher)(nil)

// Next implements storage.Puller.
func (w *versionedWatcher) Next(ctx context.Context, wait bool) (storage.Event, storage.NextStatus) {
	if w.failed {
		return storage.Event{}, storage.Ended
	}
	ev, status := storage.NextEvent(ctx, w.inner, wait)
	if status != storage.Got || ev.Object == nil {
		return ev, status
	}
	obj, err := ev.Object.Converted(w.s.memoKey, func() (*storage.Object, error) { return w.s.convertObject(ev.Object) })
	if err != nil {
		w.failed = true
		w.inner.Stop()
		return storage.Event{Type: watch.Error, Err: err}, storage.Got
	}
	ev.Object = obj
	return ev, storage.Got
}

// ResultChan implements storage.Watcher. The channel is closed once the
// watch ends (Stop, the inner watch's end, or after an ERROR event).
func (w *versionedWatcher) ResultChan() <-chan storage.Event {
	w.chOnce.Do(func() {
		w.ch = make(chan storage.Event)
		go w.forward()
	})
	return w.ch
}

// forward feeds ResultChan. It ends when the inner watch does: Stop stops
// that, so no context is needed to wait on.
func (w *versionedWatcher) forward() {
	defer close(w.ch)
	for {
		ev, status := w.Next(context.Background(), true)
		if status != storage.Got {
			return
		}
		select {
		case w.ch <- ev:
		case <-w.stop:
			return
		}
		if ev.Type == watch.Error {
			return
		}
	}
}

// Stop implements storage.Watcher.
func (w *versionedWatcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}
