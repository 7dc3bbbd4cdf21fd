package admissionregistration_test

import (
	"testing"

	"go.uber.org/goleak"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/admissionregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

var (
	sideEffectsNone = ptr.To(admissionregistrationv1.SideEffectClassNone)
	clientConfig    = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/hook")}
	// matchPods is a policy's match on pod creates.
	matchPods = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		},
	}}}
)

// TestRegistry runs the registry's conformance suite on the group's six
// kinds; kube refuses unconditional updates of every one.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, admissionregistration.NewRESTStorageProvider(), []registrytest.Case{
		{Resource: "validatingwebhookconfigurations", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, hook string) runtime.Object {
				return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta(name),
					Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: hook, ClientConfig: clientConfig,
						SideEffects: sideEffectsNone, AdmissionReviewVersions: []string{"v1"}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "a.example.com") },
				Invalid: func(name string) runtime.Object { return valid(name, "nodots") },
				Change: func(obj runtime.Object) {
					obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[0].Name = "b.example.com"
				},
			}
		}},
		{Resource: "mutatingwebhookconfigurations", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, hook string) runtime.Object {
				return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta(name),
					Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: hook, ClientConfig: clientConfig,
						SideEffects: sideEffectsNone, AdmissionReviewVersions: []string{"v1"}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "a.example.com") },
				Invalid: func(name string) runtime.Object { return valid(name, "nodots") },
				Change: func(obj runtime.Object) {
					obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[0].Name = "b.example.com"
				},
			}
		}},
		{Resource: "validatingadmissionpolicies", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			vap := func(obj runtime.Object) *admissionregistrationv1.ValidatingAdmissionPolicy {
				return obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
			}
			valid := func(name, expression string) runtime.Object {
				return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: meta(name),
					Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: matchPods,
						Validations: []admissionregistrationv1.Validation{{Expression: expression}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "true") },
				Invalid: func(name string) runtime.Object { return valid(name, "") },
				Change:  func(obj runtime.Object) { vap(obj).Spec.Validations[0].Expression = "1 == 1" },
				Status: &registrytest.StatusCheck{
					Storage:      registrytest.StatusStorage(t, info, "validatingadmissionpolicies"),
					ChangeSpec:   func(obj runtime.Object) { vap(obj).Spec.Validations[0].Expression = "2 == 2" },
					ChangeStatus: func(obj runtime.Object) { vap(obj).Status.ObservedGeneration = 1 },
				},
			}
		}},
		{Resource: "validatingadmissionpolicybindings", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, policy string) runtime.Object {
				return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta(name),
					Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy,
						ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "policy-a") },
				Invalid: func(name string) runtime.Object { return valid(name, "") },
				Change: func(obj runtime.Object) {
					obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.PolicyName = "policy-b"
				},
			}
		}},
		{Resource: "mutatingadmissionpolicies", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, expression string) runtime.Object {
				return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: meta(name),
					Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{MatchConstraints: matchPods,
						ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
						Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
							ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expression}}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "Object{}") },
				Invalid: func(name string) runtime.Object { return valid(name, "") },
				Change: func(obj runtime.Object) {
					obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
				},
			}
		}},
		{Resource: "mutatingadmissionpolicybindings", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, policy string) runtime.Object {
				return &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: meta(name),
					Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: policy}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "policy-a") },
				Invalid: func(name string) runtime.Object { return valid(name, "") },
				Change: func(obj runtime.Object) {
					obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.PolicyName = "policy-b"
				},
			}
		}},
	})
}
