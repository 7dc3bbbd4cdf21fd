package admission

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// storedNamespaces answers GetObject with the namespaces it holds, as
// stored (JSON at a revision).
type storedNamespaces map[string]*storage.Object

func (s storedNamespaces) GetObject(_ context.Context, name string, _ *metav1.GetOptions) (*storage.Object, error) {
	if obj, ok := s[name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

func storedNamespace(t *testing.T, name string, rev int64, phase string) *storage.Object {
	t.Helper()
	data := fmt.Sprintf(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":%q,"uid":"u-%s"},"status":{"phase":%q}}`, name, name, phase)
	obj, err := storage.NewObject("/registry/namespaces/"+name, rev, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestNamespaceLifecyclePhases: a create is refused in a terminating
// namespace and in a missing one; the phase is remembered per revision,
// and read again when the namespace changes.
func TestNamespaceLifecyclePhases(t *testing.T) {
	t.Parallel()
	namespaces := storedNamespaces{"ns": storedNamespace(t, "ns", 5, "Active")}
	l := &NamespaceLifecycle{Namespaces: namespaces}
	create := func() error {
		return l.Validate(context.Background(), handlers.Attributes{Operation: handlers.Create, Namespace: "ns", Name: "cm",
			Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}, nil)
	}
	if err := create(); err != nil {
		t.Fatalf("create in an active namespace: %v", err)
	}

	// The same revision is not decoded again: bytes changed behind the
	// revision's back go unseen (they never do in a store).
	namespaces["ns"] = storedNamespace(t, "ns", 5, "Terminating")
	if err := create(); err != nil {
		t.Fatalf("create at a remembered revision: %v", err)
	}

	namespaces["ns"] = storedNamespace(t, "ns", 6, "Terminating")
	if err := create(); !apierrors.IsForbidden(err) {
		t.Fatalf("create in a terminating namespace: got %v, want Forbidden", err)
	}

	delete(namespaces, "ns")
	if err := create(); !apierrors.IsNotFound(err) {
		t.Fatalf("create in a missing namespace: got %v, want NotFound", err)
	}

	// Recreated under the same name: a new revision, read again.
	namespaces["ns"] = storedNamespace(t, "ns", 9, "Active")
	if err := create(); err != nil {
		t.Fatalf("create in the recreated namespace: %v", err)
	}
}
