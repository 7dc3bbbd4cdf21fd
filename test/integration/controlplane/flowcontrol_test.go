package controlplane

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// flowSchemaStatus leaves out of the comparison what kube's flow control
// writes to flow schemas at its own pace: the Dangling condition, and its
// entry in the managed fields (TestFlowSchemaDangling checks them).
var flowSchemaStatus = objectFilter{kind: "FlowSchema", apply: func(obj map[string]any) {
	delete(obj, "status")
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	var kept []any
	for _, e := range entries {
		if e.(map[string]any)["manager"] != "api-priority-and-fairness-config-consumer-v1" {
			kept = append(kept, e)
		}
	}
	if meta != nil && entries != nil {
		meta["managedFields"] = kept
	}
}}

// TestFlowControl runs the flow control tests one after the other: the
// transcript starts by listing kube's objects, which the others add to.
func TestFlowControl(t *testing.T) {
	t.Parallel()
	t.Run("Transcript", testFlowControlTranscript)
	t.Run("Dangling", testFlowSchemaDangling)
}

// testFlowControlTranscript: kube's mandatory and suggested objects as
// they are at startup, then flowschemas and prioritylevelconfigurations
// as kube validates and defaults them (the mandatory objects' specs
// fixed, the union rules of priority levels, subjects and rules of flow
// schemas).
func testFlowControlTranscript(t *testing.T) {
	replay(t, "flowcontrol", flowSchemaStatus)
}

// testFlowSchemaDangling: the server's flow control keeps a flow
// schema's Dangling condition, as kube's does: True while the priority
// level it names is missing, False once it exists.
func testFlowSchemaDangling(t *testing.T) {
	fc := clientset(t).FlowcontrolV1()
	name := testserver.NamespaceName(t)
	_, err := fc.FlowSchemas().Create(ctx(t), &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: name}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitDangling(t, name, flowcontrolv1.ConditionTrue, fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", name))
	_, err = fc.PriorityLevelConfigurations().Create(ctx(t), &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := waitDangling(t, name, flowcontrolv1.ConditionFalse, fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", name))
	// Applied to /status by kube's flow control's manager.
	if !slices.ContainsFunc(fs.ManagedFields, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == "api-priority-and-fairness-config-consumer-v1" && m.Operation == metav1.ManagedFieldsOperationApply && m.Subresource == "status"
	}) {
		t.Errorf("the condition's managed fields: %+v", fs.ManagedFields)
	}
}

// waitDangling watches the flow schema until its Dangling condition has
// status and message (or the test's context ends).
func waitDangling(t *testing.T, name string, status flowcontrolv1.ConditionStatus, message string) *flowcontrolv1.FlowSchema {
	t.Helper()
	w, err := clientset(t).FlowcontrolV1().FlowSchemas().Watch(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		fs, ok := ev.Object.(*flowcontrolv1.FlowSchema)
		if !ok {
			t.Fatalf("watch event %s: %v", ev.Type, ev.Object)
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == status && c.Message == message {
				return fs
			}
		}
	}
	t.Fatalf("no Dangling=%s condition on %s", status, name)
	return nil
}

// TestFlowControlReadiness: /readyz waits for kube's configuration, under
// kube's name for the check.
func TestFlowControlReadiness(t *testing.T) {
	t.Parallel()
	s := server{url: srv.URL, token: srv.Token, client: srv.HTTPClient(t)}
	code, body := s.do(t, "GET", "/readyz?verbose", "", nil)
	if code != 200 || !strings.Contains(string(body), "[+]poststarthook/priority-and-fairness-config-producer ok") {
		t.Errorf("/readyz: %d %s", code, body)
	}
}
