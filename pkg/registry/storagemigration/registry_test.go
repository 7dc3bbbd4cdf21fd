package storagemigration_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storagemigration"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on storage version
// migrations, with their status subresource; their spec never changes.
func TestRegistry(t *testing.T) {
	t.Parallel()
	svm := func(obj runtime.Object) *storagemigrationv1.StorageVersionMigration {
		return obj.(*storagemigrationv1.StorageVersionMigration)
	}
	valid := func(name, resource string) runtime.Object {
		return &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: resource}}}
	}
	stamp := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	info := registrytest.BuildGroup(t, storagemigration.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "storageversionmigrations").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return valid(name, "deployments") },
		Invalid: func(name string) runtime.Object { return valid(name, "") },
		Status: &registrytest.StatusCheck{
			Storage: registrytest.StatusStorage(t, info, "storageversionmigrations"),
			ChangeStatus: func(obj runtime.Object) {
				svm(obj).Status.Conditions = []metav1.Condition{{Type: string(storagemigrationv1.MigrationRunning),
					Status: metav1.ConditionTrue, Reason: "Registrytest", LastTransitionTime: stamp}}
			},
		},
	}
	tr.Run(t)
}
