package autoscaling_test

import (
	"testing"

	"go.uber.org/goleak"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/autoscaling"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on horizontal pod
// autoscalers, with their status subresource.
func TestRegistry(t *testing.T) {
	t.Parallel()
	hpa := func(obj runtime.Object) *autoscalingv2.HorizontalPodAutoscaler {
		return obj.(*autoscalingv2.HorizontalPodAutoscaler)
	}
	valid := func(name string, maxReplicas int32) runtime.Object {
		return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To[int32](1), MaxReplicas: maxReplicas}}
	}
	info := registrytest.BuildGroup(t, autoscaling.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage:                  registrytest.Storage(t, info, "horizontalpodautoscalers").(registrytest.ResourceStorage),
		Valid:                    func(name string) runtime.Object { return valid(name, 3) },
		Invalid:                  func(name string) runtime.Object { return valid(name, 0) },
		Change:                   func(obj runtime.Object) { hpa(obj).Spec.MaxReplicas = 5 },
		AllowUnconditionalUpdate: true,
		Status: &registrytest.StatusCheck{
			Storage:      registrytest.StatusStorage(t, info, "horizontalpodautoscalers"),
			ChangeSpec:   func(obj runtime.Object) { hpa(obj).Spec.MaxReplicas = 6 },
			ChangeStatus: func(obj runtime.Object) { hpa(obj).Status.CurrentReplicas, hpa(obj).Status.DesiredReplicas = 1, 2 },
		},
	}
	tr.Run(t)
}
