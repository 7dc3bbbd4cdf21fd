package scheduling_test

import (
	"testing"

	"go.uber.org/goleak"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on priority classes.
func TestRegistry(t *testing.T) {
	t.Parallel()
	valid := func(name string, value int32) runtime.Object {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	}
	info := registrytest.BuildGroup(t, scheduling.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "priorityclasses").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return valid(name, 1000) },
		// Above kube's highest user-definable priority.
		Invalid:                  func(name string) runtime.Object { return valid(name, 2000000000) },
		Change:                   func(obj runtime.Object) { obj.(*schedulingv1.PriorityClass).Description = "changed" },
		AllowUnconditionalUpdate: true,
	}
	tr.Run(t)
}
