package admission

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var (
	execs     = []string{"pods/exec"}
	connectOp = admissionregistrationv1.Connect
)

// execPod creates the pod p, with the container c, in a namespace of the
// test's; no node runs it.
func execPod(t *testing.T) string {
	t.Helper()
	cs := clientset(t)
	ns := saNamespace(t, cs)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx(t), podOf("p", "c"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// exec is POST .../pods/p/exec?command=ls&stdout=true plus params
// (name, value pairs), as kubectl exec starts; it returns the error's
// Status.
func exec(t *testing.T, ns string, params ...string) metav1.Status {
	t.Helper()
	req := clientset(t).CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("exec").
		Param("command", "ls").Param("stdout", "true")
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	err := req.Do(ctx(t)).Error()
	if err == nil {
		t.Fatal("exec succeeded with no node to run it")
	}
	return statusOf(t, err)
}

// noHost is the storage's answer to an exec that admission let through:
// the pod runs on no node.
const noHost = `pod p does not have a host assigned`

// TestConnectValidatingDenies: a validating webhook whose rules name
// CONNECT on pods/exec refuses kubectl exec with kube's 403 and its
// message; it is sent the PodExecOptions; a webhook whose rules name only
// CREATE is not called. The Status is the webhook's, which gave no
// reason.
func TestConnectValidatingDenies(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := execPod(t)
	registerValidating(t,
		validating("create.admission.test", w, "/allow", ns, rule("", "v1", execs, admissionregistrationv1.Create)),
		validating("deny.admission.test", w, "/deny", ns, rule("", "v1", execs, connectOp)))
	var status metav1.Status
	eventually(t, func(int) error {
		if status = exec(t, ns); status.Code != http.StatusForbidden {
			return fmt.Errorf("the webhook never refused: %+v", status)
		}
		return nil
	})
	want := `admission webhook "deny.admission.test" denied the request: widgets are not welcome here`
	if status.Message != want || status.Reason != "" || status.Status != metav1.StatusFailure {
		t.Errorf("refusal: %+v", status)
	}
	reviews := w.calls("/deny")
	req := reviews[len(reviews)-1].Request
	object := string(req.Object.Raw)
	if req.Operation != "CONNECT" || req.Namespace != ns || req.Name != "p" ||
		req.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"}) ||
		req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "pods"}) || req.SubResource != "exec" ||
		req.RequestKind == nil || req.RequestKind.Kind != "PodExecOptions" || req.RequestSubResource != "exec" ||
		req.UserInfo.Username == "" {
		t.Errorf("review: %+v", req)
	}
	for _, field := range []string{`"kind":"PodExecOptions"`, `"apiVersion":"v1"`, `"command":["ls"]`, `"stdout":true`} {
		if !strings.Contains(object, field) {
			t.Errorf("the review's object %s has no %s", object, field)
		}
	}
	if len(req.OldObject.Raw) != 0 || len(req.Options.Raw) != 0 || req.DryRun == nil || *req.DryRun {
		t.Errorf("oldObject %s, options %s, dryRun %v: want null, null, false", req.OldObject.Raw, req.Options.Raw, req.DryRun)
	}
	if n := len(w.calls("/allow")); n != 0 {
		t.Errorf("the webhook of CREATE was called %d times", n)
	}
}

// TestConnectValidatingAllows: an exec a webhook allows reaches the
// storage (which answers that no node runs the pod); a webhook with an
// objectSelector is never called for it (options have no labels), even
// one selecting the objects without a label; dryRun is refused before
// admission.
func TestConnectValidatingAllows(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := execPod(t)
	selected := validating("selected.admission.test", w, "/deny", ns, rule("", "v1", execs, connectOp))
	selected.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	registerValidating(t, validating("allow.admission.test", w, "/allow", ns, rule("", "v1", []string{"pods/*"}, admissionregistrationv1.OperationAll)), selected)
	var status metav1.Status
	eventually(t, func(int) error {
		if status = exec(t, ns); len(w.calls("/allow")) == 0 {
			return fmt.Errorf("the webhook was never called: %+v", status)
		}
		return nil
	})
	if status.Code != http.StatusBadRequest || status.Message != noHost {
		t.Errorf("allowed exec: %+v", status)
	}
	if n := len(w.calls("/deny")); n != 0 {
		t.Errorf("the webhook with an objectSelector was called %d times", n)
	}
	before := len(w.calls("/allow"))
	if status := exec(t, ns, "dryRun", "All"); status.Code != http.StatusBadRequest || status.Message != "dryRun is not supported" {
		t.Errorf("dry run: %+v", status)
	}
	if n := len(w.calls("/allow")) - before; n != 0 {
		t.Errorf("a dry run was admitted %d times", n)
	}
}

// TestConnectMutating: a mutating webhook's patch of a connect's options
// is what the storage connects with (and what validating webhooks see);
// a patch that does not apply to the options is kube's 500.
func TestConnectMutating(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := execPod(t)
	registerMutating(t, mutating("nocontainer.admission.test", w, "/nocontainer", ns, rule("", "v1", execs, connectOp)))
	registerValidating(t, validating("see.admission.test", w, "/allow", ns, rule("", "v1", execs, connectOp)))
	var status metav1.Status
	eventually(t, func(int) error {
		if status = exec(t, ns); len(w.calls("/nocontainer")) == 0 || len(w.calls("/allow")) == 0 {
			return fmt.Errorf("the webhooks were not both called: %+v", status)
		}
		return nil
	})
	if status.Code != http.StatusBadRequest || status.Message != "container nope is not valid for pod p" {
		t.Errorf("patched exec: %+v", status)
	}
	validated := w.calls("/allow")
	if object := string(validated[len(validated)-1].Request.Object.Raw); !strings.Contains(object, `"container":"nope"`) {
		t.Errorf("the validating webhook saw %s", object)
	}

	other := execPod(t)
	registerMutating(t, mutating("labels.admission.test", w, "/mutate", other, rule("", "v1", execs, connectOp)))
	eventually(t, func(int) error {
		if status = exec(t, other); status.Code != http.StatusInternalServerError {
			return fmt.Errorf("not refused yet: %+v", status)
		}
		return nil
	})
	want := `Internal error occurred: add operation does not apply: doc is missing path: "/metadata/labels/mutated": missing value`
	if status.Reason != metav1.StatusReasonInternalError || status.Message != want {
		t.Errorf("a patch of what options do not have: %+v", status)
	}
}

// TestConnectFailurePolicy: a webhook that cannot be called fails a
// connect as it fails a write: open (Ignore) or closed (Fail, kube's 500).
func TestConnectFailurePolicy(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns, closed := execPod(t), execPod(t)
	open := validating("open.admission.test", w, "/garbage", ns, rule("", "v1", execs, connectOp))
	open.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	shut := validating("closed.admission.test", w, "/garbage", closed, rule("", "v1", execs, connectOp))
	shut.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	registerValidating(t, open, shut)
	var status metav1.Status
	eventually(t, func(int) error {
		if status = exec(t, closed); status.Code != http.StatusInternalServerError {
			return fmt.Errorf("not failed yet: %+v", status)
		}
		return nil
	})
	want := `Internal error occurred: failed calling webhook "closed.admission.test": received invalid webhook response: expected response.uid=`
	if !strings.HasPrefix(status.Message, want) {
		t.Errorf("failed closed: %+v", status)
	}
	if status := exec(t, ns); status.Code != http.StatusBadRequest || status.Message != noHost {
		t.Errorf("failed open: %+v", status)
	}
	if len(w.calls("/garbage")) < 2 {
		t.Errorf("the webhooks were called %d times", len(w.calls("/garbage")))
	}
}
