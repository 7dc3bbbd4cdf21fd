package generic

import (
	"context"
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// TestEtcdFailureIsNotRetried: a write whose answer from etcd never came
// may have been applied, so its Status must not carry a Retry-After
// (client-go would send the create again and fail with AlreadyExists); as
// kube's, it is a 500 with etcd's own words.
func TestEtcdFailureIsNotRetried(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, cause := range []error{context.DeadlineExceeded, errors.New("etcdserver: request timed out")} {
		err := interpretCreateError(storage.NewUnreachableError("/registry/configmaps/ns/a", cause), gr, "a")
		var se *apierrors.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("%v: not a Status: %v", cause, err)
		}
		if s := se.ErrStatus; s.Code != http.StatusInternalServerError || s.Message != cause.Error() || (s.Details != nil && s.Details.RetryAfterSeconds != 0) {
			t.Errorf("%v: got %d %q details %+v, want 500 with etcd's words and no Retry-After", cause, s.Code, s.Message, s.Details)
		}
	}
}
