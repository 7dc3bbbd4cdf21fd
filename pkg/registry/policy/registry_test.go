package policy_test

import (
	"testing"

	"go.uber.org/goleak"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/policy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on pod disruption
// budgets, with their status subresource.
func TestRegistry(t *testing.T) {
	t.Parallel()
	pdb := func(obj runtime.Object) *policyv1.PodDisruptionBudget { return obj.(*policyv1.PodDisruptionBudget) }
	valid := func(name string, minAvailable int) runtime.Object {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt(minAvailable)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
		}}
	}
	info := registrytest.BuildGroup(t, policy.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "poddisruptionbudgets").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return valid(name, 1) },
		Invalid: func(name string) runtime.Object { return valid(name, -1) },
		Change:  func(obj runtime.Object) { pdb(obj).Spec.MinAvailable = ptr.To(intstr.FromInt(2)) },
		Status: &registrytest.StatusCheck{
			Storage:      registrytest.StatusStorage(t, info, "poddisruptionbudgets"),
			ChangeSpec:   func(obj runtime.Object) { pdb(obj).Spec.MinAvailable = ptr.To(intstr.FromInt(3)) },
			ChangeStatus: func(obj runtime.Object) { pdb(obj).Status.CurrentHealthy = 1 },
		},
	}
	tr.Run(t)
}
