package rest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

func TestWritten(t *testing.T) {
	stored, err := storage.NewObject("/registry/configmaps/ns/a", 7, []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"u"}}`))
	if err != nil {
		t.Fatal(err)
	}
	result, other := &corev1.ConfigMap{}, &corev1.ConfigMap{}

	// Without a recorder in the context, recording does nothing.
	RecordWritten(context.Background(), result, stored)
	var none *Written
	if got := none.Stored(result); got != nil {
		t.Fatalf("a nil Written gave %v", got)
	}

	ctx, written := WithWritten(context.Background())
	if got := written.Stored(result); got != nil {
		t.Fatalf("nothing written, got %v", got)
	}
	RecordWritten(ctx, result, stored)
	if got := written.Stored(result); got != stored {
		t.Fatalf("Stored(result) = %v, want the recorded object", got)
	}
	// Another object (a conversion, a Status) is not what was stored.
	if got := written.Stored(other); got != nil {
		t.Fatalf("Stored(other) = %v, want nil", got)
	}
	if got := written.Stored(nil); got != nil {
		t.Fatalf("Stored(nil) = %v, want nil", got)
	}
	// A later write of another object (a namespace's defaults) wins.
	RecordWritten(ctx, other, stored)
	if written.Stored(result) != nil || written.Stored(other) != stored {
		t.Fatal("the latest write does not win")
	}
	// A write that could not tell what it stored records nothing.
	RecordWritten(ctx, result, nil)
	if written.Stored(other) != stored {
		t.Fatal("a write without a stored object replaced the record")
	}
}
