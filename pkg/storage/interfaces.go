package storage

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is what the generic registry stores objects through. Keys are
// full etcd keys ("/registry/configmaps/default/foo"); a list or watch key
// is a prefix ending in "/" when opts.Recursive is set.
//
// Revisions: every object returned carries the etcd revision of its last
// write as metadata.resourceVersion; a list carries the revision it was read
// at. Both etcd3.Store and cacher.Cacher implement Interface; where the cache
// may legally answer differently (a newer revision), the contract says so.
type Interface interface {
	// Create stores obj at key if nothing is there, and decodes the stored
	// object into out. obj must not carry a resourceVersion. ttl > 0 makes
	// the key expire after ttl seconds (events). Fails with KeyExists.
	Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error

	// Get decodes the object at key into out. opts.ResourceVersion "" reads
	// the latest state from etcd; "0" allows any cached state; a number
	// allows any state not older than it. Fails with KeyNotFound unless
	// opts.IgnoreNotFound, in which case out is left zero.
	Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error

	// GetList returns the objects under key matching opts.Predicate, sorted
	// by key, with the revision they were read at and a continue token when
	// opts.Predicate.Limit cut the list short.
	GetList(ctx context.Context, key string, opts ListOptions) (*ListResult, error)

	// GuaranteedUpdate reads the object at key, calls tryUpdate on it and
	// writes the result if the object did not change in between, retrying
	// on races. preconditions are checked against each state read.
	// cachedExisting, when not nil, is a recent state used as the first
	// guess so the common case needs no read. The stored object is decoded
	// into dest. With ignoreNotFound a missing key is passed to tryUpdate as
	// a zero object (create on update).
	GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc, cachedExisting runtime.Object) error

	// Delete removes the object at key if preconditions hold and
	// validateDeletion accepts its current state, and decodes the deleted
	// state into out (with the deletion's revision as resourceVersion).
	Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
		validateDeletion ValidateObjectFunc, cachedExisting runtime.Object) error

	// Watch streams the changes under key after opts.ResourceVersion,
	// filtered by opts.Predicate. The returned Watcher's channel is closed
	// by the watcher when it stops: on Stop, on ctx's end, or after an error
	// event.
	Watch(ctx context.Context, key string, opts ListOptions) (Watcher, error)

	// Count returns how many objects are stored under key.
	Count(ctx context.Context, key string) (int64, error)

	// CurrentResourceVersion returns the latest revision of the whole
	// store, read from etcd with a quorum read.
	CurrentResourceVersion(ctx context.Context) (int64, error)

	// ReadinessCheck returns nil once the store can serve requests.
	ReadinessCheck() error
}

// UpdateFunc computes the new state from input, the current one. Returning
// an error aborts the update (the error is returned as is). ttl, when not
// nil, sets the key's time to live.
type UpdateFunc func(input runtime.Object, res ResponseMeta) (output runtime.Object, ttl *uint64, err error)

// ResponseMeta tells an UpdateFunc about the state it is given.
type ResponseMeta struct {
	// TTL is the remaining time to live of the key in seconds, 0 for none.
	TTL int64
	// ResourceVersion is the revision of the state given.
	ResourceVersion int64
}

// ValidateObjectFunc checks the current state before a delete.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// DestroyFunc releases what building a store started (watches, clients).
type DestroyFunc func()

// Watcher is a stream of events. ResultChan's channel is closed by the
// watcher once it has stopped; Stop may be called any number of times.
type Watcher interface {
	ResultChan() <-chan Event
	Stop()
}

// Event is one change seen by a watch.
//
//   - ADDED, MODIFIED: Object is the new state.
//   - DELETED: Object is the last state before the deletion, carrying the
//     deletion's revision (or, when the object left the watch's selector,
//     its last matching state at the revision it left).
//   - BOOKMARK: Object is nil; ResourceVersion is the revision reached, and
//     InitialEventsEnd marks the end of the initial events of a watch that
//     asked for them (sendInitialEvents).
//   - ERROR: Err says why the watch ends; no event follows.
type Event struct {
	Type             watch.EventType
	Object           *Object
	ResourceVersion  int64
	InitialEventsEnd bool
	Err              error
}

// Factory builds the raw store (etcd3) for one resource.
type Factory func(cfg Config) (Interface, DestroyFunc, error)

// Decorator builds a resource's store from the raw Factory: the cacher's
// StorageWithCacher wraps it in a watch cache; the registry's
// UndecoratedStorage returns it as is.
type Decorator func(raw Factory, cfg Config) (Interface, DestroyFunc, error)

// Config is what a store needs to know about the resource it holds.
type Config struct {
	// Resource names the resource for errors, logs and metrics
	// ("configmaps", "deployments.apps").
	Resource string
	// ResourcePrefix is the key prefix of the resource, without a trailing
	// slash ("/registry/configmaps").
	ResourcePrefix string
	// NewFunc returns an empty object of the resource's Go type.
	NewFunc func() runtime.Object
	// AttrFunc returns an object's labels and selectable fields.
	AttrFunc AttrFunc
	// IndexFields names selectable fields worth indexing (pods:
	// spec.nodeName): the cache serves a selector on one of them from an
	// index, and offers events only to the watchers that care.
	IndexFields []string
	// KeyFunc returns the key of an object.
	KeyFunc func(obj runtime.Object) (string, error)
	// Paging enables continue tokens on the raw store.
	Paging bool
	// Normalize, when set, rewrites every value read from etcd into the
	// form the resource serves, before anything else sees it (kube's
	// storage codec decodes so): custom resources written under an older
	// schema or storage version are converted, pruned and defaulted. It
	// returns data itself when nothing changes, and never modifies it.
	Normalize func(data []byte) ([]byte, error)
}

// ProgressRequester is implemented by stores whose watches can be asked
// for a progress notification: every watch opened with ProgressNotify then
// gets a BOOKMARK at a revision up to which it has seen every change. A
// cache uses it to catch up with etcd's revision on an idle resource.
type ProgressRequester interface {
	RequestWatchProgress(ctx context.Context) error
}

// CompactRevisioner is implemented by stores that can tell whether their
// history was compacted past a revision.
type CompactRevisioner interface {
	// CompactedSince returns the revision history is compacted up to when
	// that is past rev (changes after rev are lost), 0 when the history
	// from rev on is whole.
	CompactedSince(ctx context.Context, rev int64) (int64, error)
}

// ObjectGetter is implemented by stores that can return one object as
// stored (the encoded Object, with the same resourceVersion semantics as
// Get), so that a reader that only writes it out skips decoding it.
type ObjectGetter interface {
	GetObject(ctx context.Context, key string, opts GetOptions) (*Object, error)
}

// ObjectWriter is implemented by stores that can return what a write
// stored: the encoded Object (JSON, with the write's revision), beside the
// decoded state that Create and GuaranteedUpdate give out. A caller that
// answers with the object as stored then skips encoding it again. An
// update that changes nothing returns the state it kept. The Object is
// nil, without error, when a store wrapping another cannot tell.
type ObjectWriter interface {
	CreateObject(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) (*Object, error)
	GuaranteedUpdateObject(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc, cachedExisting runtime.Object) (*Object, error)
}

// Stats is what a store knows, without asking etcd, of the objects it
// holds and of the watches on them: API Priority and Fairness estimates
// the work of a LIST from the first two and of a write from the third.
type Stats struct {
	// ObjectCount and ObjectBytes are the number and the encoded size of
	// the objects held.
	ObjectCount, ObjectBytes int64
	// Watchers is the number of watches open on the resource.
	Watchers int
}

// StatsReporter is a store that knows its Stats (the cacher, from its
// cache). Stats reports false while it does not (a cache not ready).
type StatsReporter interface {
	Stats() (Stats, bool)
}
