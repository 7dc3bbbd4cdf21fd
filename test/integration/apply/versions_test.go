package apply

import "net/http"

// Resources served at several versions over one storage version (the
// transcripts of this package replay any request; these are not all
// applies): what
// each version shows of the other's writes (autoscaling/v1 carries what it
// has no field for in annotations), and whose managed fields survive a
// write at the other version (an autoscaler's do; an event's recorded
// through the other group do not, as in kube).

const (
	hpasV1 = "/apis/autoscaling/v1/namespaces/NS/horizontalpodautoscalers"
	hpasV2 = "/apis/autoscaling/v2/namespaces/NS/horizontalpodautoscalers"
	events = "/api/v1/namespaces/NS/events"
	evsV1  = "/apis/events.k8s.io/v1/namespaces/NS/events"
)

const hpaV1YAML = `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: h1
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  maxReplicas: 3
  targetCPUUtilizationPercentage: 70
`

const hpaV2YAML = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: h1
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 1Gi}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 60}
`

const eventsV1YAML = `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: e1
eventTime: "2026-01-02T03:04:05.123456Z"
reportingController: example.com/ctl
reportingInstance: i-1
action: Do
reason: Done
regarding: {kind: Pod, namespace: NS, name: p}
note: it is done
type: Normal
`

var versionTranscripts = map[string][]step{
	"versions-autoscaling": {
		apply("apply-v1", hpasV1, "/h1?fieldManager=m1", hpaV1YAML),
		{name: "get-v2", method: http.MethodGet, path: hpasV2 + "/h1"},
		apply("apply-v2", hpasV2, "/h1?fieldManager=m2", hpaV2YAML),
		{name: "get-v1", method: http.MethodGet, path: hpasV1 + "/h1"},
		apply("apply-v1-conflicts", hpasV1, "/h1?fieldManager=m1", hpaV1YAML),
		apply("apply-v1-force", hpasV1, "/h1?fieldManager=m1&force=true", hpaV1YAML),
		{name: "merge-patch-v1", method: http.MethodPatch, path: hpasV1 + "/h1", contentType: mergePatch, userAgent: "kubectl/v1.32",
			body: `{"spec":{"maxReplicas":4}}`},
		{name: "put-v1-from-get", method: http.MethodPut, path: hpasV1 + "/h1", contentType: jsonBody, userAgent: "editor/1",
			body: `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h1","labels":{"l":"v"}},` +
				`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":4,"targetCPUUtilizationPercentage":70}}`},
		{name: "status-v1", method: http.MethodPatch, path: hpasV1 + "/h1/status", contentType: mergePatch, userAgent: "hpa-controller/1",
			body: `{"status":{"currentReplicas":2,"desiredReplicas":2,"currentCPUUtilizationPercentage":40}}`},
		apply("status-apply-v2", hpasV2, "/h1/status?fieldManager=ctl&force=true",
			"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: h1\nstatus:\n  desiredReplicas: 3\n"+
				"  conditions:\n  - {type: AbleToScale, status: \"True\", reason: R, lastTransitionTime: \"2026-01-02T03:04:05Z\"}\n"),
		{name: "get-final-v1", method: http.MethodGet, path: hpasV1 + "/h1"},
		{name: "get-final-v2", method: http.MethodGet, path: hpasV2 + "/h1"},
	},
	"versions-events": {
		apply("apply-events-k8s-io", evsV1, "/e1?fieldManager=m1", eventsV1YAML),
		{name: "get-core", method: http.MethodGet, path: events + "/e1"},
		apply("apply-core-drops-the-other-group", events, "/e1?fieldManager=m2",
			"apiVersion: v1\nkind: Event\nmetadata:\n  name: e1\n  labels: {a: b}\ninvolvedObject: {kind: Pod, namespace: NS, name: p}\nmessage: it is done\n"),
		{name: "merge-patch-events-k8s-io", method: http.MethodPatch, path: evsV1 + "/e1", contentType: mergePatch, userAgent: "kubectl/v1.32",
			body: `{"series":{"count":2,"lastObservedTime":"2026-01-02T03:05:05.000000Z"}}`},
		{name: "note-is-immutable", method: http.MethodPatch, path: evsV1 + "/e1", contentType: mergePatch, userAgent: "kubectl/v1.32",
			body: `{"note":"changed"}`},
		{name: "get-events-k8s-io", method: http.MethodGet, path: evsV1 + "/e1"},
	},
}

// post is a create by curl.
func post(name, path, body string) step {
	return step{name: name, method: http.MethodPost, path: path, contentType: jsonBody, userAgent: "curl/8", body: body}
}

// versionValidation: what each version refuses, and kube's words (field
// paths of the stored version at either version; events.k8s.io checks
// more than core v1).
var versionValidation = []step{
	post("v2-nomax", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"}},"metadata":{"name":"v2-nomax"}}`),
	post("v2-negmax", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":-1,"minReplicas":-2},"metadata":{"name":"v2-negmax"}}`),
	post("v2-min-gt-max", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":2,"minReplicas":3},"metadata":{"name":"v2-min-gt-max"}}`),
	post("v2-min0", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":2,"minReplicas":0},"metadata":{"name":"v2-min0"}}`),
	post("v2-noref", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"maxReplicas":2},"metadata":{"name":"v2-noref"}}`),
	post("v2-badref", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"a/b","name":"x/y","apiVersion":"v1"},"maxReplicas":2},"metadata":{"name":"v2-badref"}}`),
	post("v2-badrefver", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"D","name":"x","apiVersion":"a/b/c"},"maxReplicas":2},"metadata":{"name":"v2-badrefver"}}`),
	post("v2-rc", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"ReplicationController","name":"x","apiVersion":"v1"},"maxReplicas":2},"metadata":{"name":"v2-rc"}}`),
	post("v2-badmetrics", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":2,"metrics":[{"type":"Bogus"},{"type":"Resource"},{"type":"Resource","resource":{"name":"","target":{"type":"X","averageUtilization":0,"averageValue":"-1"}}},{"type":"Pods","pods":{"metric":{"name":""},"target":{"type":"AverageValue"}},"resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":5}}},{"type":"Object","object":{"metric":{"name":"m/x"},"describedObject":{"kind":"","name":""},"target":{"type":"Value"}}},{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"1","averageValue":"2"}}},{"type":"ContainerResource","containerResource":{"name":"cpu","container":"Bad_Name","target":{"type":"Utilization"}}},{"type":"","containerResource":{"name":"foo.bar/baz","container":"","target":{"type":"Utilization","averageUtilization":1,"averageValue":"1"}}}]},"metadata":{"name":"v2-badmetrics"}}`),
	post("v2-badbehavior", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":2,"behavior":{"scaleUp":{"stabilizationWindowSeconds":-1,"selectPolicy":"Nope","policies":[{"type":"X","value":0,"periodSeconds":0},{"type":"Pods","value":1,"periodSeconds":1801}],"tolerance":"-1"},"scaleDown":{"stabilizationWindowSeconds":3601,"policies":[]}}},"metadata":{"name":"v2-badbehavior"}}`),
	post("v1-bad", hpasV1, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"","name":""},"maxReplicas":0,"targetCPUUtilizationPercentage":0},"metadata":{"name":"v1-bad"}}`),
	post("v1-min0", hpasV1, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":2,"minReplicas":0},"metadata":{"name":"v1-min0"}}`),
	post("badname", hpasV2, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"Bad_Name"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"d","apiVersion":"apps/v1"},"maxReplicas":2}}`),

	post("events-no-time", evsV1, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},"reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Normal","regarding":{"namespace":"NS"}}`),
	post("events-deprecated-fields", evsV1, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e2"},"eventTime":"2026-01-02T03:04:05.000000Z",`+
		`"reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Odd","regarding":{"namespace":"NS"},"deprecatedCount":2,"deprecatedSource":{"host":"h"},"series":{"count":1}}`),
	post("events-no-reporter", evsV1, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e3"},"eventTime":"2026-01-02T03:04:05.000000Z","type":"Normal"}`),
	post("core-no-reporter", events, `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e4"},"eventTime":"2026-01-02T03:04:05.000000Z","type":"Normal"}`),
	post("core-old-style", events, `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e5"},"involvedObject":{"namespace":"NS"},"type":"Odd"}`),
	{name: "events-selector-source", method: http.MethodGet, path: evsV1 + "?fieldSelector=source%3Dx"},
	{name: "core-selector-regarding", method: http.MethodGet, path: events + "?fieldSelector=regarding.name%3Dx"},
	{name: "hpa-selector", method: http.MethodGet, path: hpasV1 + "?fieldSelector=spec.maxReplicas%3D1"},
}

func init() {
	transcripts["versions-validation"] = versionValidation
	for name, steps := range versionTranscripts {
		transcripts[name] = steps
	}
}
