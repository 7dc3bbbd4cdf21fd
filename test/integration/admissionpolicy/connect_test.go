package admissionpolicy

import (
	"fmt"
	"net/http"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// execRules match CONNECT on pods/exec in namespace ns.
func execRules(ns string) *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Connect},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/exec"}},
		}}},
	}
}

// execNamespace is a namespace with the pod p (container c), which no
// node runs.
func execNamespace(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	ns := srv.CreateNamespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx(t), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := c.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// execStatus is the Status POST .../pods/p/exec?command=<command>&stdout=true
// answers (it never succeeds: no node runs the pod).
func execStatus(t *testing.T, c kubernetes.Interface, ns, command string) metav1.Status {
	t.Helper()
	err := c.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("exec").
		Param("command", command).Param("stdout", "true").Do(ctx(t)).Error()
	var status apierrors.APIStatus
	if se, ok := err.(apierrors.APIStatus); ok {
		status = se
	} else {
		t.Fatalf("exec: not a Status: %v", err)
	}
	return status.Status()
}

// noHost is what the storage answers an exec admission let through.
const noHost = "pod p does not have a host assigned"

// expect is a Status's code and message.
func expect(s metav1.Status, code int32, message string) error {
	if s.Code != code || s.Message != message {
		return fmt.Errorf("got %d %q, want %d %q", s.Code, s.Message, code, message)
	}
	return nil
}

// TestConnectValidation: a ValidatingAdmissionPolicy whose rules name
// CONNECT validates kubectl exec's PodExecOptions (object; oldObject is
// null), and its denial is kube's 422; what it allows reaches the storage.
// Checked against kube-apiserver v1.37.2.
func TestConnectValidation(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := execNamespace(t, c)
	name := ns + "-only-ls"
	install(t, c, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: execRules(ns),
			Validations: []admissionregistrationv1.Validation{{
				Expression: `object.command[0] == "ls" && object.kind == "PodExecOptions" && oldObject == null && request.operation == "CONNECT"`,
				Message:    "only ls"}}}},
		binding(name, name, admissionregistrationv1.Deny))
	want := fmt.Sprintf(`pods "p" is forbidden: ValidatingAdmissionPolicy '%s' with binding '%s' denied request: only ls`, name, name)
	eventually(t, "the denial", func() error {
		return expect(execStatus(t, c, ns, "rm"), http.StatusUnprocessableEntity, want)
	})
	if s := execStatus(t, c, ns, "rm"); s.Reason != metav1.StatusReasonInvalid || s.Details == nil || s.Details.Name != "p" || s.Details.Kind != "pods" {
		t.Errorf("denial: %+v", s)
	}
	if err := expect(execStatus(t, c, ns, "ls"), http.StatusBadRequest, noHost); err != nil {
		t.Errorf("allowed exec: %v", err)
	}
}

// TestConnectMutation: a MutatingAdmissionPolicy whose rules name CONNECT
// patches the options the storage connects with (JSON patch); an apply
// configuration cannot, the options having no schema: kube's refusal.
// Checked against kube-apiserver v1.37.2.
func TestConnectMutation(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	mutation := func(ns string, m admissionregistrationv1.Mutation) string {
		p := mutatingPolicy(ns+"-container", ns, admissionregistrationv1.Fail, m)
		p.Spec.MatchConstraints = execRules(ns)
		installMutating(t, c, p)
		return p.Name
	}
	jsonPatch := execNamespace(t, c)
	mutation(jsonPatch, admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "add", path: "/container", value: "nope"}]`}})
	eventually(t, "the JSON patch", func() error {
		return expect(execStatus(t, c, jsonPatch, "ls"), http.StatusBadRequest, "container nope is not valid for pod p")
	})

	apply := execNamespace(t, c)
	name := mutation(apply, admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{container: "nope"}`}})
	want := fmt.Sprintf("policy '%s' with binding '%s' denied request: error applying patch: failed to convert patch object to typed object: no corresponding type for /v1, Kind=PodExecOptions", name, name)
	eventually(t, "the apply configuration", func() error {
		return expect(execStatus(t, c, apply, "ls"), http.StatusForbidden, want)
	})
}
