package kubectl

import "testing"

// TestDebugAndResize: kubectl debug adds an ephemeral container through
// pods/ephemeralcontainers (a second with the same name is refused),
// kubectl patch --subresource resize changes a container's cpu in place
// and refuses other changes, and kubectl lists the Local APIServices as
// kube's table prints them.
func TestDebugAndResize(t *testing.T) {
	needKubectl(t)
	runScenario(t, "debug", []step{
		{name: "create pod", args: inNS("create", "-f", "-"), manifest: "debug.yaml"},
		{name: "debug", args: inNS("debug", "pod/debugged", "--image=busybox", "--target=app", "-c", "dbg")},
		{name: "ephemeral containers", args: inNS("get", "pod", "debugged", "-o", "jsonpath={.spec.ephemeralContainers}")},
		{name: "debug same name", args: inNS("debug", "pod/debugged", "--image=busybox", "-c", "dbg")},
		{name: "resize cpu", args: inNS("patch", "pod", "debugged", "--subresource", "resize", "--type", "merge",
			"-p", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"150m","memory":"64Mi"},"limits":{"cpu":"300m","memory":"128Mi"}}}]}}`)},
		{name: "resized", args: inNS("get", "pod", "debugged", "-o", "jsonpath={.metadata.generation} {.spec.containers[0].resources}")},
		{name: "resize ephemeral storage", args: inNS("patch", "pod", "debugged", "--subresource", "resize",
			"-p", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}`)},
		{name: "apiservices", args: []string{"get", "apiservices", "v1.", "v1.apps", "v2.autoscaling"}},
		{name: "apiservice wide", args: []string{"get", "apiservice", "v1.coordination.k8s.io", "-o", "wide"}},
	})
}
