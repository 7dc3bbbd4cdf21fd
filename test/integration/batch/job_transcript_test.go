package batch

import (
	"strings"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// jobBody is a Job named name whose spec is spec (JSON members without
// braces); TEMPLATE in spec is a minimal pod template.
func jobBody(name, spec string) string {
	return `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"` + name + `"},"spec":{` + strings.ReplaceAll(spec, "TEMPLATE", podTemplate) + `}}`
}

const podTemplate = `"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}`

func init() {
	transcripts["job-defaults"] = []step{
		create("minimal: the generated selector and labels, kube's defaults", jobsPath, jobBody("minimal", `TEMPLATE`)),
		get("what is stored", jobsPath+"/minimal"),
		create("template labels become the job's, with the generated ones", jobsPath,
			`{"metadata":{"name":"labelled"},"spec":{"template":{"metadata":{"labels":{"app":"x"}},"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"busybox"}]}}}}`),
		create("the job's own labels stay its own", jobsPath,
			`{"metadata":{"name":"own-labels","labels":{"app":"x"}},"spec":{"template":{"metadata":{"labels":{"app":"x"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`),
		create("manual selector", jobsPath,
			`{"metadata":{"name":"manual"},"spec":{"manualSelector":true,"selector":{"matchLabels":{"app":"m"}},"template":{"metadata":{"labels":{"app":"m"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`),
		create("indexed, parallelism only", jobsPath, jobBody("indexed", `"completionMode":"Indexed","completions":3,TEMPLATE`)),
		create("parallelism without completions", jobsPath, jobBody("parallel", `"parallelism":4,TEMPLATE`)),
		create("pod failure policy: replacement on failure only, conditions match True", jobsPath, jobBody("pfp",
			`"podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]},{"action":"FailJob","onExitCodes":{"containerName":"c","operator":"In","values":[1,2]}}]},TEMPLATE`)),
		create("backoff limit per index: no overall limit", jobsPath, jobBody("per-index",
			`"completionMode":"Indexed","completions":2,"backoffLimitPerIndex":1,"maxFailedIndexes":1,TEMPLATE`)),
		create("managed by another controller, scheduling dropped", jobsPath, jobBody("managed",
			`"managedBy":"example.com/controller","scheduling":{"schedulingPolicy":{"basic":{}}},TEMPLATE`)),
		create("a name that makes an odd hostname warns", jobsPath, jobBody("dotted.name", `TEMPLATE`)),
		create("dry run", jobsPath+"?dryRun=All", jobBody("dry", `TEMPLATE`)),
		get("not stored", jobsPath+"/dry"),
	}

	transcripts["job-validation"] = []step{
		create("restartPolicy unset (Always)", jobsPath, `{"metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`),
		create("restartPolicy Always", jobsPath, jobBody("a", `"template":{"spec":{"restartPolicy":"Always","containers":[{"name":"c","image":"busybox"}]}}`)),
		create("restartPolicy unknown", jobsPath, jobBody("a", `"template":{"spec":{"restartPolicy":"Sometimes","containers":[{"name":"c","image":"busybox"}]}}`)),
		create("negative numbers", jobsPath, jobBody("a",
			`"parallelism":-1,"completions":-2,"activeDeadlineSeconds":-3,"backoffLimit":-4,"ttlSecondsAfterFinished":-5,TEMPLATE`)),
		create("no containers, bad name", jobsPath, `{"metadata":{"name":"Bad_Name"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[]}}}}`),
		create("manual selector missing", jobsPath, jobBody("a", `"manualSelector":true,TEMPLATE`)),
		create("manual selector not matching the template", jobsPath, jobBody("a",
			`"manualSelector":true,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"y"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}`)),
		create("selector given but not manual", jobsPath, jobBody("a", `"selector":{"matchLabels":{"app":"x"}},TEMPLATE`)),
		create("template labels conflicting with the generated ones", jobsPath, jobBody("a",
			`"template":{"metadata":{"labels":{"job-name":"other","batch.kubernetes.io/controller-uid":"x"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}`)),
		create("invalid selector", jobsPath, jobBody("a",
			`"manualSelector":true,"selector":{"matchExpressions":[{"key":"app","operator":"Sometimes"}]},TEMPLATE`)),
		create("indexed without completions", jobsPath, jobBody("a", `"completionMode":"Indexed","parallelism":2,TEMPLATE`)),
		create("unknown completion mode", jobsPath, jobBody("a", `"completionMode":"Ordered",TEMPLATE`)),
		create("per-index limits on a non-indexed job", jobsPath, jobBody("a", `"backoffLimitPerIndex":1,"maxFailedIndexes":1,TEMPLATE`)),
		create("max failed indexes without a per-index limit", jobsPath, jobBody("a", `"completionMode":"Indexed","completions":3,"maxFailedIndexes":4,TEMPLATE`)),
		create("pod failure policy with OnFailure pods", jobsPath, jobBody("a",
			`"podFailurePolicy":{"rules":[{"action":"Count","onExitCodes":{"operator":"In","values":[1]}}]},"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"busybox"}]}}`)),
		create("pod failure policy rules", jobsPath, jobBody("a", `"podFailurePolicy":{"rules":[`+
			`{"action":"Explode","onExitCodes":{"operator":"In","values":[3,0,3]}},`+
			`{"action":"","onExitCodes":{"containerName":"other","operator":"Maybe","values":[]}},`+
			`{"action":"FailIndex","onPodConditions":[{"type":"bad type!","status":"Perhaps"}]},`+
			`{"action":"Ignore"},`+
			`{"action":"Ignore","onExitCodes":{"operator":"NotIn","values":[1]},"onPodConditions":[{"type":"Ready"}]}`+
			`]},"podReplacementPolicy":"TerminatingOrFailed",TEMPLATE`)),
		create("unknown pod replacement policy", jobsPath, jobBody("a", `"podReplacementPolicy":"Never",TEMPLATE`)),
		create("success policy on a non-indexed job", jobsPath, jobBody("a", `"successPolicy":{"rules":[{"succeededCount":1}]},TEMPLATE`)),
		create("success policy rules", jobsPath, jobBody("a", `"completionMode":"Indexed","completions":3,"successPolicy":{"rules":[`+
			`{},{"succeededIndexes":"0-1,5","succeededCount":4},{"succeededIndexes":"2-1"},{"succeededIndexes":"0,2","succeededCount":3}]},TEMPLATE`)),
		create("managedBy not a domain-prefixed path", jobsPath, jobBody("a", `"managedBy":"controller",TEMPLATE`)),
		create("indexed pod hostnames too long", jobsPath, jobBody(strings.Repeat("n", 62), `"completionMode":"Indexed","completions":10,TEMPLATE`)),
	}

	transcripts["job-updates"] = []step{
		create("a job", jobsPath, jobBody("j", `TEMPLATE`)),
		patch("parallelism changes: generation goes up", jobsPath+"/j", `{"spec":{"parallelism":2}}`),
		patch("labels change: generation stays", jobsPath+"/j", `{"metadata":{"labels":{"extra":"yes"}}}`),
		patch("the main endpoint ignores status", jobsPath+"/j", `{"status":{"active":3}}`),
		patch("completions are immutable", jobsPath+"/j", `{"spec":{"completions":3}}`),
		request("the template is immutable", "PATCH", jobsPath+"/j", reference.Strategic, "",
			`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`),
		patch("the selector is immutable", jobsPath+"/j", `{"spec":{"selector":{"matchLabels":{"app":"z"}}}}`),
		patch("the completion mode and policies are immutable", jobsPath+"/j",
			`{"spec":{"completionMode":"Indexed","managedBy":"example.com/x"}}`),
		patch("suspended", jobsPath+"/j", `{"spec":{"suspend":true}}`),
		request("a suspended job that never started changes its scheduling and resources", "PATCH", jobsPath+"/j", reference.Strategic, "",
			`{"spec":{"template":{"metadata":{"annotations":{"a":"b"}},"spec":{"nodeSelector":{"zone":"a"},"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}}}}`),
		request("but not its image", "PATCH", jobsPath+"/j", reference.Strategic, "",
			`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`),
		create("an indexed job", jobsPath, jobBody("ix", `"completionMode":"Indexed","completions":3,"parallelism":3,TEMPLATE`)),
		patch("completions alone", jobsPath+"/ix", `{"spec":{"completions":5}}`),
		patch("completions with parallelism", jobsPath+"/ix", `{"spec":{"completions":5,"parallelism":5}}`),
		put("a PUT without resourceVersion", jobsPath+"/ix", jobBody("ix", `"completionMode":"Indexed","completions":5,"parallelism":5,"manualSelector":true,"selector":{"matchLabels":{"app":"ix"}},"template":{"metadata":{"labels":{"app":"ix"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}`)),
		del("deleting orphans the pods by default", jobsPath+"/ix"),
		patch("the orphan finalizer, removed by hand", jobsPath+"/ix", `{"metadata":{"finalizers":null}}`),
		get("gone", jobsPath+"/ix"),
	}

	transcripts["job-status"] = []step{
		create("a job", jobsPath, jobBody("s", `"completions":2,TEMPLATE`)),
		patch("status counters", jobsPath+"/s/status",
			`{"spec":{"parallelism":9},"status":{"active":1,"ready":1,"succeeded":1,"startTime":"2026-01-01T00:00:00Z","uncountedTerminatedPods":{}}}`),
		get("status through /status", jobsPath+"/s/status"),
		patch("negative counters, more ready than active", jobsPath+"/s/status", `{"status":{"active":-1,"failed":-1,"ready":2,"terminating":-1}}`),
		patch("counters do not go down", jobsPath+"/s/status", `{"status":{"succeeded":0}}`),
		patch("startTime of a running job is immutable", jobsPath+"/s/status", `{"status":{"startTime":"2026-01-01T00:00:05Z"}}`),
		patch("uncounted pods", jobsPath+"/s/status", `{"status":{"uncountedTerminatedPods":{"succeeded":["a","","a"],"failed":["a"]}}}`),
		patch("complete without completion time or success criteria", jobsPath+"/s/status",
			`{"status":{"conditions":[{"type":"Complete","status":"True"}]}}`),
		patch("completed indexes of a non-indexed job", jobsPath+"/s/status", `{"status":{"completedIndexes":"0"}}`),
		patch("complete", jobsPath+"/s/status", `{"status":{"active":0,"ready":0,"succeeded":2,"completionTime":"2026-01-01T00:01:05Z",`+
			`"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}}`),
		patch("a finished job stays finished", jobsPath+"/s/status", `{"status":{"conditions":[{"type":"SuccessCriteriaMet","status":"True"}],"completionTime":"2026-01-01T00:02:00Z"}}`),
		table("its table row", jobsPath+"/s"),
		create("another job", jobsPath, jobBody("other", `TEMPLATE`)),
		get("selected by status.successful", jobsPath+"?fieldSelector=status.successful%3D2"),
		get("not selected", jobsPath+"?fieldSelector=status.successful%3D1"),
		get("an unknown field", jobsPath+"?fieldSelector=spec.parallelism%3D1"),
		table("a running job's row", jobsPath+"/other"),
	}
}
