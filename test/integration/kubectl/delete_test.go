package kubectl

import "testing"

// finalizersOf shows how far the deletion of an object went.
func finalizersOf(object string) []string {
	return inNS("get", object, "-o", `jsonpath={.metadata.finalizers} {.metadata.deletionGracePeriodSeconds} {.metadata.deletionTimestamp}{"\n"}`)
}

// TestDelete deletes with kubectl's options (wait, cascade, grace
// period, selectors, dry run) and follows what each left.
//
// Foreground and orphan deletions end when the garbage collector of
// kube-controller-manager removes their finalizers; no controller manager
// runs here (nor in front of the recorded reference), so kubectl's wait
// for them times out on both, which the scenario records. This server
// does not add a garbage collector for them.
func TestDelete(t *testing.T) {
	needKubectl(t)
	runScenario(t, "delete", []step{
		{name: "create", args: inNS("create", "-f", "-"), manifest: "deletable.yaml"},
		{name: "create deployment", args: inNS("create", "-f", "-"), manifest: "multi.yaml"},
		{name: "delete", args: inNS("delete", "configmap", "plain")},
		{name: "delete background", args: inNS("delete", "configmap", "background", "--cascade=background")},
		{name: "delete foreground waits for the garbage collector", args: inNS("delete", "configmap", "foreground", "--cascade=foreground", "--timeout=2s")},
		{name: "foreground finalizer", args: finalizersOf("configmap/foreground")},
		{name: "delete orphan without waiting", args: inNS("delete", "configmap", "orphan", "--cascade=orphan", "--wait=false")},
		{name: "orphan finalizer", args: finalizersOf("configmap/orphan")},
		{name: "delete deployment foreground", args: inNS("delete", "deployment", "web", "--cascade=foreground", "--wait=false")},
		{name: "deployment finalizer", args: finalizersOf("deployment/web")},
		{name: "deployment stays", args: inNS("get", "deployment", "web")},
		{name: "release deployment", args: inNS("patch", "deployment", "web", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)},
		{name: "deployment gone", args: inNS("get", "deployment", "web")},

		{name: "delete held", args: inNS("delete", "configmap", "held", "--wait=false")},
		{name: "held", args: finalizersOf("configmap/held")},
		{name: "delete held again", args: inNS("delete", "configmap", "held", "--wait=false")},
		{name: "add a finalizer to held", args: inNS("patch", "configmap", "held", "--type=merge", "-p", `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`)},
		{name: "change held", args: inNS("label", "configmap", "held", "changed=yes")},
		{name: "wait for held times out", args: inNS("wait", "--for=delete", "configmap/held", "--timeout=1s")},
		{name: "release held", args: inNS("patch", "configmap", "held", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)},
		{name: "held gone", args: inNS("get", "configmap", "held")},
		{name: "wait for held", args: inNS("wait", "--for=delete", "configmap/held", "--timeout=5s")},

		{name: "delete by label", args: inNS("delete", "configmaps", "-l", "group=d")},
		{name: "delete missing", args: inNS("delete", "configmap", "nothere")},
		{name: "delete missing ignored", args: inNS("delete", "configmap", "nothere", "--ignore-not-found")},
		{name: "delete scheduled pod", args: inNS("delete", "pod", "scheduled", "--wait=false")},
		{name: "scheduled pod terminating", args: finalizersOf("pod/scheduled")},
		{name: "scheduled pod table", args: inNS("get", "pod", "scheduled")},
		{name: "delete scheduled pod shorter", args: inNS("delete", "pod", "scheduled", "--grace-period=5", "--wait=false")},
		{name: "scheduled pod grace period", args: finalizersOf("pod/scheduled")},
		{name: "delete scheduled pod now", args: inNS("delete", "pod", "scheduled", "--grace-period=0", "--force")},
		{name: "delete unscheduled pod", args: inNS("delete", "pod", "unscheduled")},
		{name: "pods left", args: inNS("get", "pods")},

		{name: "dry run create", args: inNS("create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server", "-o", "yaml")},
		{name: "dry run apply", args: inNS("apply", "--dry-run=server", "-f", "-"), manifest: "app1.yaml"},
		{name: "dry run apply server side", args: inNS("apply", "--server-side", "--dry-run=server", "-f", "-", "-o", "yaml"), manifest: "prune.yaml"},
		{name: "dry run patch", args: inNS("patch", "configmap", "settings", "--dry-run=server", "-p", `{"data":{"x":"y"}}`, "-o", "jsonpath={.data}")},
		{name: "dry run delete", args: inNS("delete", "configmaps", "--all", "--dry-run=server")},
		{name: "dry run delete pod", args: inNS("delete", "pods", "--all", "--dry-run=server")},
		{name: "dry runs left nothing", args: inNS("get", "configmaps,services", "--field-selector=metadata.name!=kube-root-ca.crt", "-o", `jsonpath={range .items[*]}{.metadata.name} {.data}{"\n"}{end}`)},

		{name: "validate strict", args: inNS("create", "--validate=strict", "-f", "-"), manifest: "typo.yaml"},
		{name: "validate warn", args: inNS("create", "--validate=warn", "--dry-run=server", "-f", "-"), manifest: "typo.yaml"},
		{name: "validate off", args: inNS("create", "--validate=false", "-f", "-", "-o", "jsonpath={.data}"), manifest: "typo.yaml"},
	})
}

// TestWaitAndRollout waits for conditions and rollouts. No deployment
// controller runs: the scenario writes the status one would.
func TestWaitAndRollout(t *testing.T) {
	needKubectl(t)
	runScenario(t, "rollout", []step{
		{name: "create", args: inNS("create", "-f", "-"), manifest: "multi.yaml"},
		{name: "rollout status before the controller", args: inNS("rollout", "status", "deployment/web", "--timeout=1s")},
		{name: "rollout status without watching", args: inNS("rollout", "status", "deployment/web", "--watch=false")},
		{name: "wait for a missing condition", args: inNS("wait", "--for=condition=Available", "deployment/web", "--timeout=1s")},
		{name: "the controller's status", args: inNS("patch", "deployment", "web", "--subresource=status", "--type=merge", "--patch-file=testdata/manifests/rollout.yaml")},
		{name: "rollout status", args: inNS("rollout", "status", "deployment/web", "--timeout=10s")},
		{name: "wait for condition", args: inNS("wait", "--for=condition=Available", "deployment/web", "--timeout=10s")},
		{name: "wait for condition false", args: inNS("wait", "--for=condition=Progressing=False", "deployment/web", "--timeout=1s")},
		{name: "wait for jsonpath", args: inNS("wait", "--for=jsonpath={.status.readyReplicas}=2", "deployment/web", "--timeout=10s")},
		{name: "wait for create", args: inNS("wait", "--for=create", "configmap/settings", "--timeout=10s")},
		{name: "deployment", args: inNS("get", "deployment", "web", "-o", "wide")},
		{name: "rollout history", args: inNS("rollout", "history", "deployment/web")},
		{name: "rollout pause", args: inNS("rollout", "pause", "deployment/web")},
		{name: "rollout pause again", args: inNS("rollout", "pause", "deployment/web")},
		{name: "rollout resume", args: inNS("rollout", "resume", "deployment/web")},
		{name: "rollout restart", args: inNS("rollout", "restart", "deployment/web")},
		{name: "rollout undo", args: inNS("rollout", "undo", "deployment/web")},
		{name: "rollout status after restart", args: inNS("rollout", "status", "deployment/web", "--watch=false")},
		{name: "after rollouts", args: inNS("get", "deployment", "web", "-o", "jsonpath={.metadata.generation} {.spec.paused} {.status.observedGeneration}")},
	})
}
