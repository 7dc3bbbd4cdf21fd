package webhook

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// namespaces is a rest.Getter of fixed namespaces.
type namespaces map[string]*corev1.Namespace

func (n namespaces) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

// execAttributes are the attributes of
// POST /api/v1/namespaces/ns/pods/p/exec?command=ls&stdout=true.
func execAttributes(ctx context.Context) (context.Context, handlers.Attributes, *corev1.PodExecOptions) {
	ctx = request.WithUser(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}})
	return ctx, handlers.Attributes{Operation: handlers.Connect, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
			Subresource: "exec", Namespace: "ns", Name: "p", Kind: corev1.SchemeGroupVersion.WithKind("PodExecOptions")},
		&corev1.PodExecOptions{Command: []string{"ls"}, Stdout: true}
}

func connectRule(ops []admissionregistrationv1.OperationType, resources ...string) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
		APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources}}
}

// TestShouldCallConnect: which webhooks a CONNECT concerns, as kube's
// ShouldCallHook decides: rules naming CONNECT (or "*") and the
// subresource, the namespace's labels, and an objectSelector that selects
// anything never matching (an options object has no labels).
func TestShouldCallConnect(t *testing.T) {
	connect := []admissionregistrationv1.OperationType{admissionregistrationv1.Connect}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	d := newDispatcher(NewSource(nil, nil), namespaces{"ns": {ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"team": "a"}}}})
	for _, tc := range []struct {
		name    string
		webhook admissionregistrationv1.ValidatingWebhook
		want    bool
	}{
		{"CONNECT pods/exec", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")}}, true},
		{"* pods/*", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(all, "pods/*")}}, true},
		{"CONNECT */*", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "*/*")}}, true},
		{"CREATE pods/exec", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(create, "pods/exec")}}, false},
		{"CONNECT pods", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods")}}, false},
		{"CONNECT pods/attach", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/attach")}}, false},
		{"namespaceSelector matching", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}, true},
		{"namespaceSelector not matching", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}}, false},
		{"objectSelector matchLabels", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}, false},
		{"objectSelector DoesNotExist", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpDoesNotExist}}}}, false},
		{"empty objectSelector", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			ObjectSelector: &metav1.LabelSelector{}}, true},
		{"matchCondition on the options", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "ls", Expression: `object.kind == "PodExecOptions" && object.command[0] == "ls" && oldObject == null && request.operation == "CONNECT"`}}}, true},
		{"matchCondition false", admissionregistrationv1.ValidatingWebhook{Rules: []admissionregistrationv1.RuleWithOperations{connectRule(connect, "pods/exec")},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "tty", Expression: `has(object.tty) && object.tty`}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.webhook.Name = "w.example.com"
			// The API's defaults: selectors select everything.
			if tc.webhook.NamespaceSelector == nil {
				tc.webhook.NamespaceSelector = &metav1.LabelSelector{}
			}
			if tc.webhook.ObjectSelector == nil {
				tc.webhook.ObjectSelector = &metav1.LabelSelector{}
			}
			h := newValidatingHook("c", 0, &tc.webhook)
			ctx, a, opts := execAttributes(context.Background())
			inv, _, _, err := d.shouldCall(ctx, h, versioned(attributes(ctx, a, opts)))
			if err != nil {
				t.Fatalf("shouldCall: %v", err)
			}
			if got := inv != nil; got != tc.want {
				t.Fatalf("called: got %v, want %v", got, tc.want)
			}
			if inv != nil && (inv.kind != a.Kind || inv.resource != a.Resource || inv.subresource != "exec") {
				t.Errorf("invocation: got %+v", inv)
			}
		})
	}
}

// TestConnectReview: the review of a CONNECT names the endpoint's kind,
// resource and subresource, and has the options as its object (with
// their apiVersion and kind), no old object, no options and no dry run.
func TestConnectReview(t *testing.T) {
	ctx, a, opts := execAttributes(context.Background())
	v := versioned(attributes(ctx, a, opts))
	inv := &invocation{resource: a.Resource, subresource: a.Subresource, kind: a.Kind}
	h := &hook{name: "w.example.com", reviewVersions: []string{"v1"}}
	_, review, _, err := newReview(h, v, inv)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Request struct {
			admissionv1.AdmissionRequest
			Object    map[string]any `json:"object"`
			OldObject map[string]any `json:"oldObject"`
			Options   map[string]any `json:"options"`
		} `json:"request"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	r := got.Request
	if r.Operation != admissionv1.Connect || r.Name != "p" || r.Namespace != "ns" || r.UserInfo.Username != "alice" {
		t.Errorf("operation, name, namespace, user: got %s %s %s %s", r.Operation, r.Name, r.Namespace, r.UserInfo.Username)
	}
	wantKind := metav1.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"}
	wantResource := metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	if r.Kind != wantKind || r.Resource != wantResource || r.SubResource != "exec" {
		t.Errorf("kind, resource, subresource: got %v %v %q", r.Kind, r.Resource, r.SubResource)
	}
	if r.RequestKind == nil || *r.RequestKind != wantKind || r.RequestResource == nil || *r.RequestResource != wantResource || r.RequestSubResource != "exec" {
		t.Errorf("request kind, resource, subresource: got %v %v %q", r.RequestKind, r.RequestResource, r.RequestSubResource)
	}
	if r.Object["apiVersion"] != "v1" || r.Object["kind"] != "PodExecOptions" || r.Object["stdout"] != true {
		t.Errorf("object: got %v", r.Object)
	}
	if cmd, _ := r.Object["command"].([]any); len(cmd) != 1 || cmd[0] != "ls" {
		t.Errorf("object's command: got %v", r.Object["command"])
	}
	if r.OldObject != nil || r.Options != nil {
		t.Errorf("oldObject, options: got %v %v, want null", r.OldObject, r.Options)
	}
	if r.DryRun == nil || *r.DryRun {
		t.Errorf("dryRun: got %v, want false", r.DryRun)
	}
}
