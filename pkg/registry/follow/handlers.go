package follow

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Objects is a Handler that decodes what it is handed into objects of
// type T. An object that does not decode fails the round (the Loop lists
// again after a backoff).
type Objects[T runtime.Object] struct {
	// New returns an empty object to decode into.
	New func() T
	// List gets a list's objects, in key order, and its revision. When
	// nil, each object goes to Event as ADDED instead (what a watch
	// without a resourceVersion starts with).
	List func(objs []T, rv int64)
	// Event gets each change: ADDED, MODIFIED or DELETED (obj is then
	// the last state).
	Event func(t watch.EventType, obj T)
}

// OnList implements Handler.
func (o Objects[T]) OnList(items []*storage.Object, rv int64) error {
	objs := make([]T, len(items))
	for i, item := range items {
		objs[i] = o.New()
		if err := item.Decode(objs[i]); err != nil {
			return err
		}
	}
	if o.List == nil {
		for _, obj := range objs {
			o.Event(watch.Added, obj)
		}
		return nil
	}
	o.List(objs, rv)
	return nil
}

// OnEvent implements Handler.
func (o Objects[T]) OnEvent(ev storage.Event) error {
	obj := o.New()
	if err := ev.Object.Decode(obj); err != nil {
		return err
	}
	o.Event(ev.Type, obj)
	return nil
}

// Changes is a Handler for callers that read the store again when it
// changes: it calls the func after every list and every event.
type Changes func()

// OnList implements Handler.
func (f Changes) OnList([]*storage.Object, int64) error {
	f()
	return nil
}

// OnEvent implements Handler.
func (f Changes) OnEvent(storage.Event) error {
	f()
	return nil
}
