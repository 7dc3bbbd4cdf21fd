package coordination_test

import (
	"testing"

	"go.uber.org/goleak"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/coordination"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on leases, which
// kube lets a PUT create but never update without a resourceVersion.
func TestRegistry(t *testing.T) {
	t.Parallel()
	valid := func(name string, duration int32) runtime.Object {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("holder-1"), LeaseDurationSeconds: ptr.To(duration)}}
	}
	info := registrytest.BuildGroup(t, coordination.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "leases").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return valid(name, 15) },
		Invalid: func(name string) runtime.Object { return valid(name, 0) },
		Change: func(obj runtime.Object) {
			obj.(*coordinationv1.Lease).Spec.HolderIdentity = ptr.To("holder-2")
		},
		AllowCreateOnUpdate: true,
	}
	tr.Run(t)
}
