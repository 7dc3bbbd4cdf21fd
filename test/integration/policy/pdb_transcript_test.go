package policy

// pdbBody is a PodDisruptionBudget named name whose spec is spec (JSON
// members without braces).
func pdbBody(name, spec string) string {
	return `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"` + name + `"},"spec":{` + spec + `}}`
}

func init() {
	transcripts["pdb-crud"] = []step{
		create("minAvailable", pdbsPath, pdbBody("min", `"minAvailable":1,"selector":{"matchLabels":{"app":"x"}}`)),
		create("maxUnavailable as a percentage, unhealthy pods always evictable", pdbsPath,
			pdbBody("max", `"maxUnavailable":"25%","unhealthyPodEvictionPolicy":"AlwaysAllow","selector":{"matchExpressions":[{"key":"app","operator":"Exists"}]}`)),
		create("no selector, a name kube only checks as a path segment", pdbsPath, pdbBody("Odd_Name", `"minAvailable":"50%"`)),
		create("the v1beta1 match-none label is kept alone, stripped among others", pdbsPath, pdbBody("v1beta1",
			`"minAvailable":1,"selector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match","operator":"Exists"}]}`)),
		create("match none", pdbsPath, pdbBody("none",
			`"selector":{"matchExpressions":[{"key":"pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match","operator":"Exists"}]}`)),
		get("what is stored", pdbsPath+"/max"),
		table("table", pdbsPath),
		put("an update must name its resourceVersion", pdbsPath+"/min", pdbBody("min", `"minAvailable":2,"selector":{"matchLabels":{"app":"x"}}`)),
		patch("the spec changes: generation goes up", pdbsPath+"/min", `{"spec":{"minAvailable":2}}`),
		patch("the main endpoint ignores status", pdbsPath+"/min", `{"status":{"disruptionsAllowed":5}}`),
		patch("status", pdbsPath+"/min/status", `{"spec":{"minAvailable":9},"status":{"observedGeneration":2,"disruptionsAllowed":1,"currentHealthy":3,"desiredHealthy":2,"expectedPods":3,`+
			`"conditions":[{"type":"DisruptionAllowed","status":"True","reason":"SufficientPods","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`),
		patch("bad status", pdbsPath+"/min/status", `{"status":{"disruptionsAllowed":-1,"currentHealthy":-1,"desiredHealthy":-1,"expectedPods":-1,`+
			`"conditions":[{"type":"bad type!","status":"Maybe","reason":"","message":"","lastTransitionTime":null}]}}`),
		get("pdb is not a field", pdbsPath+"?fieldSelector=spec.minAvailable%3D1"),
	}

	transcripts["pdb-validation"] = []step{
		create("both set", pdbsPath, pdbBody("a", `"minAvailable":1,"maxUnavailable":"10%","selector":{"matchLabels":{"app":"x"}}`)),
		create("negative and too many", pdbsPath, pdbBody("a", `"minAvailable":-1`)),
		create("above 100%", pdbsPath, pdbBody("a", `"maxUnavailable":"150%"`)),
		create("not a percentage", pdbsPath, pdbBody("a", `"minAvailable":"half"`)),
		create("bad selector", pdbsPath, pdbBody("a", `"selector":{"matchLabels":{"bad key!":"x"},"matchExpressions":[{"key":"a","operator":"In"}]}`)),
		create("unknown eviction policy", pdbsPath, pdbBody("a", `"unhealthyPodEvictionPolicy":"Never"`)),
		create("a name that is not a path segment", pdbsPath, pdbBody("a%b", `"minAvailable":1`)),
	}
}
