package flowcontrol_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

var stamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// TestRegistry runs the registry's conformance suite on flow schemas and
// priority levels, with their status subresources.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, flowcontrol.NewRESTStorageProvider(), []registrytest.Case{
		{Resource: "flowschemas", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			fs := func(obj runtime.Object) *flowcontrolv1.FlowSchema { return obj.(*flowcontrolv1.FlowSchema) }
			valid := func(name string, precedence int32) runtime.Object {
				return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
					MatchingPrecedence:         precedence}}
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, 500) },
				Invalid:                  func(name string) runtime.Object { return valid(name, 20000) },
				Change:                   func(obj runtime.Object) { fs(obj).Spec.MatchingPrecedence = 600 },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:    registrytest.StatusStorage(t, info, "flowschemas"),
					ChangeSpec: func(obj runtime.Object) { fs(obj).Spec.MatchingPrecedence = 700 },
					ChangeStatus: func(obj runtime.Object) {
						fs(obj).Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling,
							Status: flowcontrolv1.ConditionTrue, Reason: "Registrytest", LastTransitionTime: stamp}}
					},
				},
			}
		}},
		{Resource: "prioritylevelconfigurations", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			plc := func(obj runtime.Object) *flowcontrolv1.PriorityLevelConfiguration {
				return obj.(*flowcontrolv1.PriorityLevelConfiguration)
			}
			valid := func(name string, kind flowcontrolv1.PriorityLevelEnablement) runtime.Object {
				return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: kind, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
						NominalConcurrencyShares: ptr.To[int32](10),
						LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
			}
			shares := func(obj runtime.Object) **int32 { return &plc(obj).Spec.Limited.NominalConcurrencyShares }
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, flowcontrolv1.PriorityLevelEnablementLimited) },
				Invalid:                  func(name string) runtime.Object { return valid(name, "Registrytest") },
				Change:                   func(obj runtime.Object) { *shares(obj) = ptr.To[int32](20) },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:    registrytest.StatusStorage(t, info, "prioritylevelconfigurations"),
					ChangeSpec: func(obj runtime.Object) { *shares(obj) = ptr.To[int32](30) },
					ChangeStatus: func(obj runtime.Object) {
						plc(obj).Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "Registrytest",
							Status: flowcontrolv1.ConditionTrue, Reason: "Registrytest", LastTransitionTime: stamp}}
					},
				},
			}
		}},
	})
}
