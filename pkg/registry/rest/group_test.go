package rest

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

type fakeStorage struct{ notReady error }

func (fakeStorage) New() runtime.Object { return nil }
func (fakeStorage) Destroy()            {}

type readinessStorage struct{ fakeStorage }

func (s readinessStorage) StorageReadiness() error { return s.notReady }

func testGroups() []APIGroupInfo {
	return []APIGroupInfo{
		{GroupName: "", PrioritizedVersions: []string{"v1"}, VersionedResourcesStorageMap: map[string]map[string]Storage{
			"v1": {"pods": readinessStorage{}, "pods/status": fakeStorage{}},
		}},
		{GroupName: "autoscaling", PrioritizedVersions: []string{"v2", "v1"}, VersionedResourcesStorageMap: map[string]map[string]Storage{
			"v2": {"horizontalpodautoscalers": fakeStorage{}},
			"v1": {"horizontalpodautoscalers": readinessStorage{fakeStorage{errors.New("not yet")}}, "older": fakeStorage{}},
		}},
	}
}

// TestPreferredResources: the resources of each group's preferred version,
// without subresources.
func TestPreferredResources(t *testing.T) {
	var got []string
	for gvr := range PreferredResources(testGroups()) {
		got = append(got, gvr.String())
	}
	slices.Sort(got)
	if want := []string{"/v1, Resource=pods", "autoscaling/v2, Resource=horizontalpodautoscalers"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStorageReadinessCheckers: every version's storages that say when
// they are ready.
func TestStorageReadinessCheckers(t *testing.T) {
	groups := testGroups()
	if got := len(groups[0].StorageReadinessCheckers()); got != 1 {
		t.Errorf("core: %d checkers, want 1", got)
	}
	checkers := groups[1].StorageReadinessCheckers()
	if len(checkers) != 1 || checkers[0].StorageReadiness() == nil {
		t.Errorf("autoscaling: %v, want the v1 storage that is not ready", checkers)
	}
}
