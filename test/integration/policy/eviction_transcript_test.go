package policy

import "github.com/miniapiserver/miniapiserver/test/integration/reference"

// podBody is a pod named name with labels (JSON members without braces)
// on node (none when "").
func podBody(name, labels, node string) string {
	spec := `"containers":[{"name":"c","image":"busybox"}]`
	if node != "" {
		spec = `"nodeName":"` + node + `",` + spec
	}
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","labels":{` + labels + `}},"spec":{` + spec + `}}`
}

// running marks a pod Running, ready or not.
func running(name string, ready bool) step {
	status := map[bool]string{true: "True", false: "False"}[ready]
	return patch("running "+name, podsPath+"/"+name+"/status",
		`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"`+status+`"}]}}`)
}

// evict POSTs an Eviction of pod name (body members after metadata, if
// any) in apiVersion.
func evict(what, name, apiVersion, rest string) step {
	body := `{"apiVersion":"` + apiVersion + `","kind":"Eviction","metadata":{"name":"` + name + `"}` + rest + `}`
	return create(what, podsPath+"/"+name+"/eviction", body)
}

// budgetStatus sets the status of PodDisruptionBudget name.
func budgetStatus(what, name, status string) step {
	return patch(what, pdbsPath+"/"+name+"/status", `{"status":{`+status+`}}`)
}

const observed = `"observedGeneration":1,`

func init() {
	transcripts["eviction-budget"] = []step{
		create("a running pod", podsPath, podBody("p", `"app":"x"`, "node-1")),
		running("p", true),
		create("its budget", pdbsPath, pdbBody("b", `"minAvailable":1,"selector":{"matchLabels":{"app":"x"}}`)),
		evict("a budget its controller has not seen: retry later", "p", "policy/v1", ""),
		budgetStatus("no disruption allowed", "b", observed+`"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1`),
		evict("the budget needs the pod", "p", "policy/v1", ""),
		budgetStatus("a failed sync", "b", `"currentHealthy":3,"conditions":[{"type":"DisruptionAllowed","status":"False","reason":"SyncFailed","message":"it broke","lastTransitionTime":"2026-01-01T00:00:00Z"}]`),
		evict("the sync failed", "p", "policy/v1", ""),
		budgetStatus("insufficient pods", "b", `"conditions":[{"type":"DisruptionAllowed","status":"False","reason":"InsufficientPods","message":"not enough","lastTransitionTime":"2026-01-01T00:00:00Z"}]`),
		evict("what the condition says", "p", "policy/v1", ""),
		budgetStatus("a negative allowance is refused", "b", `"disruptionsAllowed":-1`),
		evict("still what the condition says", "p", "policy/v1", ""),
		budgetStatus("one disruption allowed", "b", `"disruptionsAllowed":1,"conditions":[{"type":"DisruptionAllowed","status":"True","reason":"SufficientPods","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]`),
		request("a dry run evicts nothing", "POST", podsPath+"/p/eviction?dryRun=All", reference.JSON, "", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`),
		get("the budget is unchanged", pdbsPath+"/b"),
		get("the pod is unchanged", podsPath+"/p"),
		evict("evicted", "p", "policy/v1", `,"deleteOptions":{"gracePeriodSeconds":20}`),
		get("the budget counts the disruption", pdbsPath+"/b"),
		get("the pod is a disruption target, being deleted", podsPath+"/p"),
		evict("a pod being deleted goes again", "p", "policy/v1", ""),
		create("a pending pod", podsPath, podBody("pending", `"app":"x"`, "")),
		evict("pending pods go whatever the budget", "pending", "policy/v1", ""),
		get("gone", podsPath+"/pending"),
		create("a finished pod", podsPath, podBody("done", `"app":"x"`, "node-1")),
		patch("succeeded", podsPath+"/done/status", `{"status":{"phase":"Succeeded"}}`),
		evict("finished pods go whatever the budget", "done", "policy/v1beta1", ""),
		create("an unready pod", podsPath, podBody("unready", `"app":"x"`, "node-1")),
		running("unready", false),
		evict("an unready pod the budget does not need goes", "unready", "policy/v1", ""),
		get("the budget is unchanged by it", pdbsPath+"/b"),
	}

	transcripts["eviction-requests"] = []step{
		create("a pod", podsPath, podBody("p", `"app":"y"`, "node-1")),
		running("p", true),
		create("the URL names another pod", podsPath+"/other/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`),
		evict("no such pod", "missing", "policy/v1", ""),
		create("not an Eviction", podsPath+"/p/eviction", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`),
		create("no version of Eviction has it", podsPath+"/p/eviction", `{"apiVersion":"policy/v2","kind":"Eviction","metadata":{"name":"p"}}`),
		evict("ignoring store read errors is refused", "p", "policy/v1", `,"deleteOptions":{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`),
		request("dry runs that disagree", "POST", podsPath+"/p/eviction?dryRun=All", reference.JSON, "",
			`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"},"deleteOptions":{"dryRun":["Other"]}}`),
		evict("another pod's UID", "p", "policy/v1", `,"deleteOptions":{"preconditions":{"uid":"0d2d1a4c-0000-0000-0000-000000000000"}}`),
		create("a budget", pdbsPath, pdbBody("one", `"maxUnavailable":1,"selector":{"matchLabels":{"app":"y"}}`)),
		create("another budget", pdbsPath, pdbBody("two", `"maxUnavailable":1,"selector":{}`)),
		evict("two budgets", "p", "policy/v1", ""),
		request("one budget fewer", "DELETE", pdbsPath+"/two", "", "", ""),
		create("a budget always evicting unhealthy pods", pdbsPath, pdbBody("lenient",
			`"minAvailable":5,"unhealthyPodEvictionPolicy":"AlwaysAllow","selector":{"matchLabels":{"app":"z"}}`)),
		create("an unready pod", podsPath, podBody("unready", `"app":"z"`, "node-1")),
		running("unready", false),
		evict("unready pods go", "unready", "policy/v1", `,"deleteOptions":{"gracePeriodSeconds":0}`),
		get("gone", podsPath+"/unready"),
	}
}
