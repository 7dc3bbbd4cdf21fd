package storage

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// GetOptions tune a Get.
type GetOptions struct {
	// IgnoreNotFound leaves out zero instead of failing on a missing key.
	IgnoreNotFound bool
	// ResourceVersion: "" for the latest state, "0" for any, N for a state
	// not older than N.
	ResourceVersion string
}

// ListOptions tune GetList and Watch.
type ListOptions struct {
	// ResourceVersion and ResourceVersionMatch as in metav1.ListOptions.
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Predicate selects objects, and for GetList carries limit and continue.
	Predicate SelectionPredicate
	// Recursive treats the key as a prefix.
	Recursive bool
	// ProgressNotify asks Watch for BOOKMARK events (allowWatchBookmarks);
	// a watch without it never sends one.
	ProgressNotify bool
	// SendInitialEvents asks Watch to start with ADDED events for the state
	// at ResourceVersion, ended by a bookmark (the WatchList protocol).
	SendInitialEvents *bool
	// WithoutPreviousState makes Watch report a deletion by its key and
	// revision only (an Object without data) and read no previous state
	// from the store: for a watcher that keeps every key's last state
	// itself, as the cacher does. etcd would otherwise read and send the
	// previous value of every change. Ignored with a selective Predicate,
	// whose matching needs the previous state.
	WithoutPreviousState bool
}

// ListResult is a page of a list.
type ListResult struct {
	// ResourceVersion is the revision the list was read at.
	ResourceVersion int64
	// Continue, when not empty, fetches the next page.
	Continue string
	// RemainingItemCount is how many objects follow this page, when known.
	RemainingItemCount *int64
	// Items are the matching objects, sorted by key.
	Items []*Object
}

// Preconditions must hold for an update or delete to go ahead.
type Preconditions struct {
	UID             *types.UID
	ResourceVersion *string
}

// Check returns a Conflict error when obj does not satisfy p.
func (p *Preconditions) Check(key string, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return NewInternalError(key, err)
	}
	if p.UID != nil && *p.UID != accessor.GetUID() {
		return NewConflictError(key, 0, &PreconditionError{Msg: fmt.Sprintf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, accessor.GetUID())})
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != accessor.GetResourceVersion() {
		return NewConflictError(key, 0, &PreconditionError{Msg: fmt.Sprintf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
			*p.ResourceVersion, accessor.GetResourceVersion())})
	}
	return nil
}

// PreconditionError is the cause of the conflict Check returns (found
// with errors.As), for callers that word a failed precondition their own
// way.
type PreconditionError struct {
	Msg string
}

func (e *PreconditionError) Error() string { return e.Msg }

// ParseResourceVersion parses a resourceVersion: "" is 0, otherwise a
// non-negative integer. Anything else is an InvalidObj error.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, &Error{Code: ErrCodeInvalidObj, Msg: fmt.Sprintf("invalid resource version %q", rv)}
	}
	return n, nil
}
