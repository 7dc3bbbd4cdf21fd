package core_test

import (
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// TestDeclaredServing: what core declares beside its Stores is served:
// namespaces through NamespaceREST, with only the verbs kube's namespaces
// have, and the connect subresources at their paths.
func TestDeclaredServing(t *testing.T) {
	resources := buildCore(t).VersionedResourcesStorageMap["v1"]

	ns, ok := resources["namespaces"].(*core.NamespaceREST)
	if !ok {
		t.Fatalf("namespaces serves %T, want *core.NamespaceREST", resources["namespaces"])
	}
	for _, tc := range []struct {
		name string
		has  bool
	}{
		{"CollectionDeleter", isA[rest.CollectionDeleter](ns)},
		{"UnknownFieldPruner", isA[rest.UnknownFieldPruner](ns)},
		{"StructureProvider", isA[rest.StructureProvider](ns)},
		{"StorageReadinessChecker", isA[rest.StorageReadinessChecker](ns)},
		{"CategoriesProvider", isA[rest.CategoriesProvider](ns)},
		{"StatsReporter", isA[storage.StatsReporter](ns)},
	} {
		if tc.has {
			t.Errorf("namespaces serve %s, which kube's do not", tc.name)
		}
	}
	if _, ok := resources["namespaces/finalize"].(rest.Updater); !ok {
		t.Errorf("namespaces/finalize serves %T, want an updater", resources["namespaces/finalize"])
	}

	for _, path := range []string{"pods/log", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "nodes/proxy", "services/proxy"} {
		if _, ok := resources[path].(rest.Connecter); !ok && path != "pods/log" {
			t.Errorf("%s serves %T, want a connecter", path, resources[path])
		}
		if resources[path] == nil {
			t.Errorf("%s is not served", path)
		}
	}
}

func isA[T any](s rest.Storage) bool {
	_, ok := s.(T)
	return ok
}
