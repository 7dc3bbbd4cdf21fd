package generic

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// OptimisticLockErrorMsg is kube's message for an update whose
// resourceVersion is not the current one.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// Each verb converts storage errors to a Kubernetes Status once, here. Errors
// that already are Status errors (from strategies, tryUpdate) pass through.

func interpretGetError(err error, gr schema.GroupResource, name string) error {
	switch storage.CodeOf(err) {
	case storage.ErrCodeKeyNotFound:
		return apierrors.NewNotFound(gr, name)
	}
	return interpretCommon(err)
}

func interpretListError(err error, gr schema.GroupResource) error {
	switch storage.CodeOf(err) {
	case storage.ErrCodeKeyNotFound:
		return apierrors.NewNotFound(gr, "")
	case storage.ErrCodeInvalidObj:
		return apierrors.NewBadRequest(storageMessage(err))
	}
	return interpretCommon(err)
}

func interpretCreateError(err error, gr schema.GroupResource, name string) error {
	switch storage.CodeOf(err) {
	case storage.ErrCodeKeyExists:
		return apierrors.NewAlreadyExists(gr, name)
	case storage.ErrCodeInvalidObj:
		// kube answers a create carrying a resourceVersion with a bare 500.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: storageMessage(err),
		}}
	}
	return interpretCommon(err)
}

func interpretUpdateError(err error, gr schema.GroupResource, name string) error {
	switch storage.CodeOf(err) {
	case storage.ErrCodeResourceVersionConflicts, storage.ErrCodeKeyExists, storage.ErrCodeInvalidObj:
		return apierrors.NewConflict(gr, name, errors.New(storageMessage(err)))
	case storage.ErrCodeKeyNotFound:
		return apierrors.NewNotFound(gr, name)
	}
	return interpretCommon(err)
}

func interpretDeleteError(err error, gr schema.GroupResource, name string) error {
	switch storage.CodeOf(err) {
	case storage.ErrCodeKeyNotFound:
		return apierrors.NewNotFound(gr, name)
	case storage.ErrCodeResourceVersionConflicts, storage.ErrCodeKeyExists, storage.ErrCodeInvalidObj:
		return apierrors.NewConflict(gr, name, errors.New(storageMessage(err)))
	}
	return interpretCommon(err)
}

// InterpretWatchError converts the error of a watch's ERROR event (Status
// errors pass through).
func InterpretWatchError(err error, gr schema.GroupResource) error {
	return interpretListError(err, gr)
}

// interpretCommon converts the codes every verb shares.
func interpretCommon(err error) error {
	var se *storage.Error
	if !errors.As(err, &se) {
		return err // already a Status, or a bug the HTTP layer reports as 500
	}
	switch se.Code {
	case storage.ErrCodeExpired:
		status := apierrors.NewResourceExpired(storageMessage(err))
		status.ErrStatus.ListMeta.Continue = se.Continue
		return status
	case storage.ErrCodeTooLargeResourceVersion:
		// kube: 504 with Retry-After: 1 and cause ResourceVersionTooLarge.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusGatewayTimeout, Reason: metav1.StatusReasonTimeout,
			Message: "Timeout: " + storageMessage(err),
			Details: &metav1.StatusDetails{
				RetryAfterSeconds: 1,
				Causes: []metav1.StatusCause{{
					Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
				}},
			},
		}}
	case storage.ErrCodeNotReady:
		return apierrors.NewTooManyRequests(storageMessage(err), 1)
	case storage.ErrCodeInvalidObj:
		return apierrors.NewBadRequest(storageMessage(err))
	case storage.ErrCodeUnreachable, storage.ErrCodeNoSpace:
		// kube passes etcd's error up as it is: a 500 with etcd's words,
		// no reason and no Retry-After. A Retry-After here would make
		// client-go send a create again that etcd may have applied (the
		// answer timed out, not the write): the retry then fails with
		// AlreadyExists.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: storageMessage(err),
		}}
	}
	return apierrors.NewInternalError(err)
}

// storageMessage is the text of a storage error as clients see it: the
// cause for conflicts ("Precondition failed: ..."), else the message.
func storageMessage(err error) string {
	var se *storage.Error
	if errors.As(err, &se) && se.Msg == "" && se.Err != nil {
		return se.Err.Error()
	}
	return err.Error()
}
