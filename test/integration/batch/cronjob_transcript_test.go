package batch

import "strings"

// cronJobBody is a CronJob named name whose spec is spec (JSON members
// without braces); JOB in spec is a minimal job template.
func cronJobBody(name, spec string) string {
	return `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"` + name + `"},"spec":{` + strings.ReplaceAll(spec, "JOB", jobTemplate) + `}}`
}

const jobTemplate = `"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"busybox"}]}}}}`

func init() {
	transcripts["cronjob-defaults"] = []step{
		create("minimal: kube's defaults, none in the job template", cronJobPath, cronJobBody("minimal", `"schedule":"*/5 * * * *",JOB`)),
		create("time zone, job template with a failure policy", cronJobPath, cronJobBody("zoned", `"schedule":"@hourly","timeZone":"Europe/Paris",`+
			`"jobTemplate":{"metadata":{"labels":{"a":"b"}},"spec":{"podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]},`+
			`"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`)),
		get("what is stored", cronJobPath+"/zoned"),
		table("table", cronJobPath+"/zoned"),
		create("a name that makes an odd hostname warns", cronJobPath, cronJobBody("dotted.name", `"schedule":"0 0 * * *",JOB`)),
	}

	transcripts["cronjob-validation"] = []step{
		create("no schedule", cronJobPath, cronJobBody("a", `JOB`)),
		create("too few fields", cronJobPath, cronJobBody("a", `"schedule":"* * *",JOB`)),
		create("out of range", cronJobPath, cronJobBody("a", `"schedule":"61 * * * *",JOB`)),
		create("not a number", cronJobPath, cronJobBody("a", `"schedule":"x * * * *",JOB`)),
		create("unknown descriptor", cronJobPath, cronJobBody("a", `"schedule":"@sometimes",JOB`)),
		create("a time zone in the schedule", cronJobPath, cronJobBody("a", `"schedule":"CRON_TZ=UTC 0 0 * * *",JOB`)),
		create("a schedule that panics the parser", cronJobPath, cronJobBody("a", `"schedule":"TZ=0",JOB`)),
		create("unknown time zone", cronJobPath, cronJobBody("a", `"schedule":"@daily","timeZone":"Mars/Olympus",JOB`)),
		create("malformed time zone", cronJobPath, cronJobBody("a", `"schedule":"@daily","timeZone":"../etc",JOB`)),
		create("empty time zone", cronJobPath, cronJobBody("a", `"schedule":"@daily","timeZone":"",JOB`)),
		create("local time zone", cronJobPath, cronJobBody("a", `"schedule":"@daily","timeZone":"Local",JOB`)),
		create("bad policy and limits", cronJobPath, cronJobBody("a", `"schedule":"@daily","concurrencyPolicy":"Sometimes",`+
			`"startingDeadlineSeconds":-1,"successfulJobsHistoryLimit":-1,"failedJobsHistoryLimit":-2,JOB`)),
		create("a job template with a selector", cronJobPath, cronJobBody("a", `"schedule":"@daily","jobTemplate":{"spec":{"manualSelector":true,`+
			`"selector":{"matchLabels":{"a":"b"}},"parallelism":-1,"template":{"spec":{"restartPolicy":"Always","containers":[{"name":"c","image":"busybox"}]}}}}`)),
		create("a name too long for its jobs", cronJobPath, cronJobBody(strings.Repeat("c", 53), `"schedule":"@daily",JOB`)),
	}

	transcripts["cronjob-updates"] = []step{
		create("a cronjob", cronJobPath, cronJobBody("u", `"schedule":"@daily",JOB`)),
		patch("the schedule changes: generation goes up", cronJobPath+"/u", `{"spec":{"schedule":"0 3 * * *","suspend":true}}`),
		patch("a time zone in the schedule", cronJobPath+"/u", `{"spec":{"schedule":"TZ=UTC 0 3 * * *"}}`),
		patch("an unknown time zone", cronJobPath+"/u", `{"spec":{"timeZone":"Nowhere"}}`),
		patch("the main endpoint ignores status", cronJobPath+"/u", `{"status":{"lastScheduleTime":"2026-01-01T00:00:00Z"}}`),
		patch("status: anything goes", cronJobPath+"/u/status", `{"spec":{"schedule":"@hourly"},"status":{"lastScheduleTime":"2026-01-01T00:00:00Z",`+
			`"lastSuccessfulTime":"2026-01-01T00:00:10Z","active":[{"kind":"Job","name":"u-1","namespace":"NS"}]}}`),
		table("table", cronJobPath+"/u"),
		get("cj is not a field", cronJobPath+"?fieldSelector=spec.schedule%3D%40daily"),
	}
}
