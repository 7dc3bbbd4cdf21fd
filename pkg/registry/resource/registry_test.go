package resource_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	resourcegroup "github.com/miniapiserver/miniapiserver/pkg/registry/resource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

var stamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// claimSpec asks for one device of class.
func claimSpec(request string) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: request, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"}}}}}
}

// TestRegistry runs the registry's conformance suite on the
// resource.k8s.io kinds; no claim asks for admin access, so the group
// needs no namespaces.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, resourcegroup.NewRESTStorageProvider(nil), []registrytest.Case{
		{Resource: "deviceclasses", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, expression string) runtime.Object {
				return &resourcev1.DeviceClass{ObjectMeta: meta(name), Spec: resourcev1.DeviceClassSpec{
					Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expression}}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "true") },
				Invalid: func(name string) runtime.Object { return valid(name, "") },
				Change: func(obj runtime.Object) {
					obj.(*resourcev1.DeviceClass).Spec.Selectors[0].CEL.Expression = "1 == 1"
				},
				AllowUnconditionalUpdate: true,
			}
		}},
		{Resource: "devicetaintrules", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			rule := func(obj runtime.Object) *resourcev1.DeviceTaintRule { return obj.(*resourcev1.DeviceTaintRule) }
			valid := func(name string, effect resourcev1.DeviceTaintEffect) runtime.Object {
				return &resourcev1.DeviceTaintRule{ObjectMeta: meta(name), Spec: resourcev1.DeviceTaintRuleSpec{
					DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("example.com")},
					Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Effect: effect}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, resourcev1.DeviceTaintEffectNoSchedule) },
				Invalid: func(name string) runtime.Object { return valid(name, "Registrytest") },
				Change:  func(obj runtime.Object) { rule(obj).Spec.Taint.Value = "yes" },
				Status: &registrytest.StatusCheck{
					Storage:    registrytest.StatusStorage(t, info, "devicetaintrules"),
					ChangeSpec: func(obj runtime.Object) { rule(obj).Spec.Taint.Value = "no" },
					ChangeStatus: func(obj runtime.Object) {
						rule(obj).Status.Conditions = []metav1.Condition{{Type: "EvictionInProgress",
							Status: metav1.ConditionFalse, Reason: "Registrytest", LastTransitionTime: stamp}}
					},
				},
			}
		}},
		{Resource: "resourceclaims", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			// Its status (an allocation, its consumers) is the scheduler's,
			// beyond this suite's simple changes.
			return registrytest.Tester{
				Valid: func(name string) runtime.Object {
					return &resourcev1.ResourceClaim{ObjectMeta: meta(name), Spec: claimSpec("req")}
				},
				Invalid: func(name string) runtime.Object {
					return &resourcev1.ResourceClaim{ObjectMeta: meta(name), Spec: claimSpec("Not A Request!")}
				},
				AllowUnconditionalUpdate: true,
			}
		}},
		{Resource: "resourceclaimtemplates", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			return registrytest.Tester{
				Valid: func(name string) runtime.Object {
					return &resourcev1.ResourceClaimTemplate{ObjectMeta: meta(name),
						Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claimSpec("req")}}
				},
				Invalid: func(name string) runtime.Object {
					return &resourcev1.ResourceClaimTemplate{ObjectMeta: meta(name),
						Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claimSpec("Not A Request!")}}
				},
				AllowUnconditionalUpdate: true,
			}
		}},
		{Resource: "resourceslices", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, device string) runtime.Object {
				return &resourcev1.ResourceSlice{ObjectMeta: meta(name), Spec: resourcev1.ResourceSliceSpec{
					Driver: "example.com", NodeName: ptr.To("node-1"),
					Pool:    resourcev1.ResourcePool{Name: "pool", Generation: 1, ResourceSliceCount: 1},
					Devices: []resourcev1.Device{{Name: device}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "dev-1") },
				Invalid: func(name string) runtime.Object { return valid(name, "Not A Device!") },
				Change: func(obj runtime.Object) {
					obj.(*resourcev1.ResourceSlice).Spec.Pool.Generation = 2
				},
				AllowUnconditionalUpdate: true,
			}
		}},
	})
}
