package placement

const (
	priorityClasses = "/apis/scheduling.k8s.io/v1/priorityclasses"
	runtimeClasses  = "/apis/node.k8s.io/v1/runtimeclasses"
)

func init() {
	transcripts["priorityclasses"] = []step{
		get("system-node-critical", priorityClasses+"/system-node-critical"),
		get("system-cluster-critical", priorityClasses+"/system-cluster-critical"),
		create("create-minimal", priorityClasses, `{"metadata":{"name":"pc-NS"},"value":10}`),
		create("too-high", priorityClasses, `{"metadata":{"name":"pc2-NS"},"value":1000000001,"preemptionPolicy":"Sometimes"}`),
		create("empty-policy", priorityClasses, `{"metadata":{"name":"pc2-NS"},"value":1,"preemptionPolicy":""}`),
		create("system-prefix-unknown", priorityClasses, `{"metadata":{"name":"system-NS"},"value":1}`),
		create("system-prefix-known-wrong-value", priorityClasses, `{"metadata":{"name":"system-node-critical"},"value":1}`),
		create("system-prefix-known-wrong-default", priorityClasses, `{"metadata":{"name":"system-cluster-critical"},"value":2000000000,"globalDefault":true}`),
		create("system-class-exists", priorityClasses, `{"metadata":{"name":"system-cluster-critical"},"value":2000000000}`),
		create("bad-name", priorityClasses, `{`+badName+`,"value":1}`),
		create("unknown-policy", priorityClasses, `{"metadata":{"name":"pc3-NS"},"value":-5,"preemptionPolicy":"PreemptNever"}`),
		create("never-preempts", priorityClasses, `{"metadata":{"name":"pc3-NS"},"value":-5,"preemptionPolicy":"Never","description":"low"}`),
		patch("value-and-policy-immutable", priorityClasses+"/pc-NS", `{"value":11,"preemptionPolicy":"Never"}`),
		patch("description-changes", priorityClasses+"/pc-NS", `{"description":"d","metadata":{"labels":{"a":"b"}}}`),
		put("put-without-resource-version", priorityClasses+"/pc-NS", `{"metadata":{"name":"pc-NS"},"value":10,"description":"e"}`),
		table("table", priorityClasses+tableOfOne+"pc3-NS"),
		del("system-class-undeletable", priorityClasses+"/system-node-critical"),
		del("delete", priorityClasses+"/pc3-NS"),
		get("unknown-field-selector", priorityClasses+"?fieldSelector=value%3D1"),
	}
	transcripts["runtimeclasses"] = []step{
		create("create-minimal", runtimeClasses, `{"metadata":{"name":"rc-NS"},"handler":"runc"}`),
		create("no-handler", runtimeClasses, `{`+badName+`}`),
		create("bad-handler-overhead-scheduling", runtimeClasses, `{"metadata":{"name":"rc2-NS"},"handler":"Bad_Handler",
			"overhead":{"podFixed":{"cpu":"-1","memory":"10Mi","nvidia.com/gpu":"1"}},
			"scheduling":{"nodeSelector":{"bad key":"v"},"tolerations":[{"key":"k","operator":"Exists","value":"v"},
			{"operator":"Equal"},{"key":"k","effect":"Sometimes"},{"key":"a","operator":"Lt","value":"1"},{"key":"d","tolerationSeconds":5},{"key":"d","tolerationSeconds":6}]}}`),
		// One bad resource a step: kube reports them in map order.
		create("fractional-extended-resource", runtimeClasses, `{"metadata":{"name":"rc2-NS"},"handler":"h","overhead":{"podFixed":{"example.com/foo":"1.5"}}}`),
		create("bad-node-selector-value", runtimeClasses, `{"metadata":{"name":"rc2-NS"},"handler":"h","scheduling":{"nodeSelector":{"k":"bad value!"}}}`),
		create("unknown-resource", runtimeClasses, `{"metadata":{"name":"rc2-NS"},"handler":"h","overhead":{"podFixed":{"pods":"1"}}}`),
		create("full", runtimeClasses, `{"metadata":{"name":"rc3-NS"},"handler":"kata","overhead":{"podFixed":{"cpu":"250m","memory":"120Mi"}},
			"scheduling":{"nodeSelector":{"beta.kubernetes.io/os":"linux","runtime":"kata"},"tolerations":[{"key":"kata","operator":"Exists","effect":"NoSchedule"}]}}`),
		put("create-by-put", runtimeClasses+"/rc4-NS", `{"metadata":{"name":"rc4-NS"},"handler":"gvisor"}`),
		put("update-needs-a-resource-version", runtimeClasses+"/rc4-NS", `{"metadata":{"name":"rc4-NS"},"handler":"gvisor"}`),
		patch("handler-immutable", runtimeClasses+"/rc-NS", `{"handler":"crun"}`),
		patch("handler-immutable-and-bad", runtimeClasses+"/rc-NS", `{"handler":"Bad_Handler"}`),
		patch("handler-emptied", runtimeClasses+"/rc-NS", `{"handler":""}`),
		patch("overhead-changes", runtimeClasses+"/rc-NS", `{"overhead":{"podFixed":{"cpu":"1"}}}`),
		table("table", runtimeClasses+tableOfOne+"rc3-NS"),
		del("delete", runtimeClasses+"/rc4-NS"),
	}
}
