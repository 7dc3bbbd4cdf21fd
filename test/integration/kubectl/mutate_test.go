package kubectl

import "testing"

// getWeb shows what the mutations of TestMutate leave on the Deployment.
var getWeb = inNS("get", "deployment", "web", "-o", `jsonpath={.metadata.generation} {.spec.replicas} {.metadata.labels} {.metadata.annotations} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env}{"\n"}`)

// TestMutate changes objects with label, annotate, patch (strategic,
// merge, JSON), apply (client side three times, server side, conflicts,
// prune), replace, scale, edit, set image, set env and diff, and reads
// back what each left.
func TestMutate(t *testing.T) {
	needKubectl(t)
	runScenario(t, "mutate", []step{
		{name: "create", args: inNS("create", "-f", "-"), manifest: "multi.yaml"},
		{name: "create more", args: inNS("create", "-f", "-"), manifest: "list.yaml"},
		{name: "create replicated", args: inNS("create", "-f", "-"), manifest: "replicated.yaml"},

		{name: "label add", args: inNS("label", "deployment", "web", "tier=frontend")},
		{name: "label without overwrite", args: inNS("label", "deployment", "web", "tier=backend")},
		{name: "label overwrite", args: inNS("label", "deployment", "web", "tier=backend", "--overwrite")},
		{name: "label several", args: inNS("label", "configmap,secret,lease", "-l", "app=demo", "team=a")},
		{name: "label remove", args: inNS("label", "deployment", "web", "tier-")},
		{name: "label remove missing", args: inNS("label", "deployment", "web", "nothere-")},
		{name: "label stale resourceVersion", args: inNS("label", "deployment", "web", "x=y", "--resource-version=1")},
		{name: "annotate add", args: inNS("annotate", "deployment", "web", "owner=alice", "description=the web tier")},
		{name: "annotate without overwrite", args: inNS("annotate", "deployment", "web", "owner=bob")},
		{name: "annotate overwrite", args: inNS("annotate", "deployment", "web", "owner=bob", "--overwrite")},
		{name: "annotate remove", args: inNS("annotate", "deployment", "web", "description-")},
		{name: "after label and annotate", args: getWeb},
		{name: "labels of the others", args: inNS("get", "configmap,secret,lease", "-l", "team=a", "--show-labels")},

		{name: "patch strategic", args: inNS("patch", "deployment", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}`)},
		{name: "patch merge", args: inNS("patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"replicas":3}}`)},
		{name: "patch json", args: inNS("patch", "deployment", "web", "--type=json", "-p", `[{"op":"replace","path":"/spec/replicas","value":4}]`)},
		{name: "patch json test fails", args: inNS("patch", "deployment", "web", "--type=json", "-p", `[{"op":"test","path":"/spec/replicas","value":9}]`)},
		{name: "patch no change", args: inNS("patch", "deployment", "web", "-p", `{"spec":{"replicas":4}}`)},
		{name: "patch wrong type", args: inNS("patch", "deployment", "web", "-p", `{"spec":{"replicas":"four"}}`)},
		{name: "patch immutable selector", args: inNS("patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"selector":{"matchLabels":{"app":"other"}}}}`)},
		{name: "patch output", args: inNS("patch", "configmap", "settings", "--type=merge", "-p", `{"data":{"level":"debug"}}`, "-o", "jsonpath={.data}")},
		{name: "patch status subresource", args: inNS("patch", "deployment", "web", "--subresource=status", "--type=merge", "-p", `{"status":{"replicas":1}}`)},
		{name: "after patches", args: getWeb},

		{name: "apply create", args: inNS("apply", "-f", "-"), manifest: "app1.yaml"},
		{name: "apply change", args: inNS("apply", "-f", "-"), manifest: "app2.yaml"},
		{name: "apply remove fields", args: inNS("apply", "-f", "-"), manifest: "app3.yaml"},
		{name: "apply unchanged", args: inNS("apply", "-f", "-"), manifest: "app3.yaml"},
		{name: "after client-side apply", args: inNS("get", "configmap,service", "-l", "set=app", "-o", "yaml")},
		{name: "apply server side", args: inNS("apply", "--server-side", "-f", "-"), manifest: "app3.yaml"},
		{name: "apply server side conflicts", args: inNS("apply", "--server-side", "--field-manager=deployer", "-f", "-"), manifest: "app-ssa.yaml"},
		{name: "apply server side forced", args: inNS("apply", "--server-side", "--field-manager=deployer", "--force-conflicts", "-f", "-"), manifest: "app-ssa.yaml"},
		{name: "after server-side apply", args: inNS("get", "configmap", "app-config", "-o", "yaml", "--show-managed-fields")},
		{name: "apply prune", args: inNS("apply", "--prune", "-l", "set=app", "--prune-allowlist=core/v1/ConfigMap", "--prune-allowlist=core/v1/Service", "-f", "-"), manifest: "prune.yaml"},
		{name: "after prune", args: inNS("get", "configmap,service", "-l", "set=app", "-o", "name")},

		{name: "replace", args: inNS("replace", "-f", "-"), manifest: "replace.yaml"},
		{name: "after replace", args: inNS("get", "configmap", "settings", "-o", "yaml")},
		{name: "replace force", args: inNS("replace", "--force", "-f", "-"), manifest: "multi.yaml"},
		{name: "after replace force", args: inNS("get", "configmap", "settings", "-o", "jsonpath={.metadata.labels} {.data}")},
		{name: "replace missing", args: inNS("replace", "-f", "-"), manifest: "typo.yaml"},

		{name: "scale deployment", args: inNS("scale", "deployment", "web", "--replicas=5")},
		{name: "scale statefulset", args: inNS("scale", "statefulset", "db", "--replicas=3")},
		{name: "scale replicaset", args: inNS("scale", "replicaset", "frontend", "--replicas=2")},
		{name: "scale replicationcontroller", args: inNS("scale", "replicationcontroller", "legacy", "--replicas=4")},
		{name: "scale precondition fails", args: inNS("scale", "deployment", "web", "--current-replicas=3", "--replicas=1")},
		{name: "scale precondition holds", args: inNS("scale", "deployment", "web", "--current-replicas=5", "--replicas=1")},
		{name: "scale several", args: inNS("scale", "statefulset,replicaset", "--all", "--replicas=0")},
		{name: "scale daemonset", args: inNS("scale", "daemonset", "agent", "--replicas=2")},
		{name: "scale negative", args: inNS("scale", "deployment", "web", "--replicas=-1")},
		{name: "after scale", args: inNS("get", "deployments,statefulsets,replicasets,replicationcontrollers", "-o", `custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas,GENERATION:.metadata.generation`)},

		{name: "edit", args: inNS("edit", "deployment", "web"), editor: `sed -i 's/replicas: 1$/replicas: 6/' "$1"`},
		{name: "edit without change", args: inNS("edit", "deployment", "web"), editor: `true`},
		{name: "edit invalid then fixed", args: inNS("edit", "deployment", "web"),
			editor: `if grep -q 'was not valid' "$1"; then grep '^# ' "$1" | tail -n +5 >&2; sed -i 's/replicas: -6$/replicas: 7/' "$1"; else sed -i 's/replicas: 6$/replicas: -6/' "$1"; fi`},
		{name: "edit output", args: inNS("edit", "configmap", "settings", "-o", "json"), editor: `sed -i 's/mode: production/mode: edited/' "$1"`},
		{name: "edit a list", args: inNS("edit", "configmap/settings", "lease/leader"), editor: `sed -i 's/holderIdentity: node-a/holderIdentity: node-b/; s/mode: edited/mode: again/' "$1"`},
		{name: "after edits", args: inNS("get", "configmap/settings", "lease/leader", "-o", "jsonpath={.items[*].data} {.items[*].spec.holderIdentity}")},
		{name: "after edit", args: getWeb},

		{name: "set image", args: inNS("set", "image", "deployment/web", "nginx=nginx:1.27")},
		{name: "set image unknown container", args: inNS("set", "image", "deployment/web", "nope=nginx:1.27")},
		{name: "set env", args: inNS("set", "env", "deployment/web", "LOG=debug", "MODE=fast")},
		{name: "set env list", args: inNS("set", "env", "deployment/web", "--list")},
		{name: "set env remove", args: inNS("set", "env", "deployment/web", "MODE-")},
		{name: "set env from configmap", args: inNS("set", "env", "deployment/web", "--from=configmap/settings")},
		{name: "set image statefulset", args: inNS("set", "image", "statefulset/db", "postgres=postgres:17")},
		{name: "set resources", args: inNS("set", "resources", "deployment/web", "--limits=cpu=200m,memory=128Mi")},
		{name: "after set", args: inNS("get", "deployment", "web", "-o", "jsonpath={.metadata.generation} {.spec.template.spec.containers[0]}")},

		{name: "diff unchanged", args: inNS("diff", "-f", "-"), manifest: "prune.yaml"},
		{name: "diff changed", args: inNS("diff", "-f", "-"), manifest: "app-ssa.yaml"},
		{name: "diff new object", args: inNS("diff", "-f", "-"), manifest: "app1.yaml"},
		{name: "diff server side", args: inNS("diff", "--server-side", "--force-conflicts", "-f", "-"), manifest: "app-ssa.yaml"},
		{name: "diff left nothing", args: inNS("get", "configmap,service", "-l", "set=app", "-o", "name")},
	})
}
