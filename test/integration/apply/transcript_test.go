package apply

import (
	"net/http"
	"strings"
	"testing"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// step is one request of a transcript. NS in the path and body is the
// test's namespace.
type step struct {
	name        string
	method      string
	path        string
	contentType string
	// userAgent names the manager of writes without fieldManager.
	userAgent string
	body      string
}

const (
	applyYAML  = "application/apply-patch+yaml"
	mergePatch = "application/merge-patch+json"
	smPatch    = "application/strategic-merge-patch+json"
	jsonPatch  = "application/json-patch+json"
	jsonBody   = "application/json"
	cms        = "/api/v1/namespaces/NS/configmaps"
	deploys    = "/apis/apps/v1/namespaces/NS/deployments"
	pods       = "/api/v1/namespaces/NS/pods"
)

func apply(name, path, query, body string) step {
	return step{name: name, method: http.MethodPatch, path: path + query, contentType: applyYAML, userAgent: "apply-test/1", body: body}
}

func cmYAML(name, rest string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" + rest
}

const deployYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d1
  labels: {app: d1}
spec:
  replicas: 2
  selector:
    matchLabels: {app: d1}
  template:
    metadata:
      labels: {app: d1}
    spec:
      containers:
      - name: c
        image: nginx
`

const scaleYAML = "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: d1\nspec:\n  replicas: 3\n"

// transcripts are replayed in order, each in a namespace of its own: a
// step sees what the earlier ones wrote.
var transcripts = map[string][]step{
	// What kube refuses in an apply, and how it words it.
	"apply-errors": {
		apply("no-field-manager", cms, "/a1", cmYAML("a1", "data:\n  x: \"1\"\n")),
		{name: "force-on-merge-patch", method: http.MethodPatch, path: cms + "/a1?force=true", contentType: mergePatch, userAgent: "apply-test/1", body: "{}"},
		apply("invalid-yaml", cms, "/a2?fieldManager=m1", "apiVersion: v1\nkind: ConfigMap\n  bad: [\n"),
		apply("json-body-creates", cms, "/a2?fieldManager=m1", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a2"},"data":{"k":"v"}}`),
		apply("no-kind", cms, "/a3?fieldManager=m1", "apiVersion: v1\nmetadata:\n  name: a3\n"),
		apply("no-api-version", cms, "/a3?fieldManager=m1", "kind: ConfigMap\nmetadata:\n  name: a3\n"),
		apply("wrong-api-version", cms, "/a3?fieldManager=m1", "apiVersion: apps/v1\nkind: ConfigMap\nmetadata:\n  name: a3\n"),
		apply("wrong-kind", cms, "/a3?fieldManager=m1", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a3\n"),
		apply("managed-fields-set", cms, "/a3?fieldManager=m1", cmYAML("a3", "  managedFields: []\n")),
		apply("name-mismatch", cms, "/a3?fieldManager=m1", cmYAML("other", "")),
		apply("no-name", cms, "/a3?fieldManager=m1", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n"),
		apply("namespace-mismatch", cms, "/a3?fieldManager=m1", cmYAML("a3", "  namespace: default\n")),
		apply("empty-body", cms, "/a3?fieldManager=m1", ""),
		apply("list-body", cms, "/a3?fieldManager=m1", "[1,2]"),
		apply("unknown-field", cms, "/a4?fieldManager=m1", cmYAML("a4", "foo: bar\n")),
		apply("duplicate-field-strict", cms, "/a5?fieldManager=m1&fieldValidation=Strict", cmYAML("a5", "data:\n  a: \"1\"\n  a: \"2\"\n")),
		apply("duplicate-field-warns", cms, "/a6?fieldManager=m1", cmYAML("a6", "data:\n  a: \"1\"\n  a: \"2\"\n")),
		apply("uid-of-nothing", cms, "/a7?fieldManager=m1", cmYAML("a7", "  uid: 0d2d1a4c-0000-4000-8000-000000000000\n")),
		apply("dry-run-create", cms, "/a8?fieldManager=m1&dryRun=All", cmYAML("a8", "data: {k: v}\n")),
		{name: "dry-run-created-nothing", method: http.MethodGet, path: cms + "/a8"},
	},
	// Ownership: conflicts, co-ownership, force, and the managers of
	// updates and patches.
	"apply-conflicts": {
		apply("create", cms, "/b1?fieldManager=m1", cmYAML("b1", "  labels: {l1: v1}\ndata:\n  x: \"1\"\n  z: \"0\"\n")),
		apply("same-again-is-a-no-op", cms, "/b1?fieldManager=m1", cmYAML("b1", "  labels: {l1: v1}\ndata:\n  x: \"1\"\n  z: \"0\"\n")),
		apply("conflicts", cms, "/b1?fieldManager=m2", cmYAML("b1", "  labels: {l1: v2}\ndata:\n  x: \"2\"\n  y: \"3\"\n")),
		apply("same-values-co-own", cms, "/b1?fieldManager=m2", cmYAML("b1", "data:\n  x: \"1\"\n  y: \"3\"\n")),
		apply("force", cms, "/b1?fieldManager=m2&force=true", cmYAML("b1", "  labels: {l1: v2}\ndata:\n  x: \"2\"\n  y: \"3\"\n")),
		apply("drop-fields", cms, "/b1?fieldManager=m1", cmYAML("b1", "")),
		{name: "put-by-kubectl", method: http.MethodPut, path: cms + "/b1", contentType: jsonBody, userAgent: "kubectl/v1.32.4 (linux/amd64) kubernetes/abc",
			body: `{"metadata":{"name":"b1"},"data":{"x":"9","y":"3","w":"1"}}`},
		apply("conflict-with-update", cms, "/b1?fieldManager=m2", cmYAML("b1", "data:\n  x: \"2\"\n")),
		{name: "merge-patch-by-browser", method: http.MethodPatch, path: cms + "/b1", contentType: mergePatch, userAgent: "Mozilla/5.0 (X11)", body: `{"data":{"v":"1"}}`},
		{name: "strategic-patch-odd-agent", method: http.MethodPatch, path: cms + "/b1", contentType: smPatch, userAgent: "\tweird agent\u00e9/1", body: `{"data":{"u":"1"}}`},
		{name: "json-patch-field-manager", method: http.MethodPatch, path: cms + "/b1?fieldManager=jp", contentType: jsonPatch, userAgent: "apply-test/1", body: `[{"op":"add","path":"/data/t","value":"1"}]`},
		{name: "long-user-agent", method: http.MethodPatch, path: cms + "/b1", contentType: mergePatch, userAgent: strings.Repeat("a", 200) + "/1", body: `{"data":{"s":"1"}}`},
		{name: "no-user-agent", method: http.MethodPatch, path: cms + "/b1", contentType: mergePatch, body: `{"data":{"r":"1"}}`},
		{name: "get", method: http.MethodGet, path: cms + "/b1"},
	},
	// Managed fields sent by clients: kept when valid, ignored when not,
	// reset by an empty list.
	"client-managed-fields": {
		{name: "create", method: http.MethodPost, path: cms, contentType: jsonBody, userAgent: "curl/8", body: `{"metadata":{"name":"c1"},"data":{"a":"b"}}`},
		{name: "update", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u1/1", body: `{"metadata":{"name":"c1"},"data":{"a":"b","x":"1"}}`},
		{name: "invalid-ignored", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u3/1",
			body: `{"metadata":{"name":"c1","managedFields":[{"manager":"bad","operation":"Nope","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]},"data":{"a":"b","x":"3"}}`},
		{name: "valid-replaces", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u4/1",
			body: `{"metadata":{"name":"c1","managedFields":[{"manager":"fake","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]},"data":{"a":"b","x":"4"}}`},
		{name: "empty-list-resets", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u2/1", body: `{"metadata":{"name":"c1","managedFields":[]},"data":{"a":"b","x":"2"}}`},
		{name: "untracked-update", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u5/1", body: `{"metadata":{"name":"c1"},"data":{"a":"b","x":"5"}}`},
		apply("apply-tracks-again", cms, "/c1?fieldManager=m1", cmYAML("c1", "data:\n  a: b\n")),
		{name: "update-after-apply", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u6/1", body: `{"metadata":{"name":"c1"},"data":{"a":"b","x":"6"}}`},
		{name: "same-update-is-a-no-op", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u6/1", body: `{"metadata":{"name":"c1"},"data":{"a":"b","x":"6"}}`},
		{name: "create-with-managed-fields", method: http.MethodPost, path: cms, contentType: jsonBody, userAgent: "curl/8",
			body: `{"metadata":{"name":"c2","managedFields":[{"manager":"pre","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]},"data":{"a":"b","c":"d"}}`},
		{name: "create-with-empty-entry", method: http.MethodPost, path: cms, contentType: jsonBody, userAgent: "curl/8", body: `{"metadata":{"name":"c3","managedFields":[{}]},"data":{"a":"b"}}`},
		{name: "create-with-invalid", method: http.MethodPost, path: cms, contentType: jsonBody, userAgent: "curl/8",
			body: `{"metadata":{"name":"c4","managedFields":[{"manager":"x","operation":"Bad"}]},"data":{"a":"b"}}`},
		{name: "put-with-another-uid", method: http.MethodPut, path: cms + "/c1", contentType: jsonBody, userAgent: "u7/1",
			body: `{"metadata":{"name":"c1","uid":"0d2d1a4c-0000-4000-8000-000000000000"},"data":{"a":"b"}}`},
		{name: "field-manager-too-long", method: http.MethodPost, path: cms + "?fieldManager=" + strings.Repeat("m", 129), contentType: jsonBody, userAgent: "curl/8",
			body: `{"metadata":{"name":"c5"},"data":{"a":"b"}}`},
	},
	// Subresources: status and scale have managers of their own, and the
	// strategies' reset fields are owned by no one there.
	"subresources": {
		apply("status-of-nothing", deploys, "/d1/status?fieldManager=m1", deployYAML),
		apply("scale-of-nothing", deploys, "/d1/scale?fieldManager=m1", scaleYAML),
		apply("create", deploys, "/d1?fieldManager=m1", deployYAML),
		{name: "get-scale", method: http.MethodGet, path: deploys + "/d1/scale"},
		apply("scale-conflicts", deploys, "/d1/scale?fieldManager=scaler", scaleYAML),
		apply("scale-force", deploys, "/d1/scale?fieldManager=scaler&force=true", scaleYAML),
		{name: "get-after-scale", method: http.MethodGet, path: deploys + "/d1"},
		{name: "put-scale", method: http.MethodPut, path: deploys + "/d1/scale", contentType: jsonBody, userAgent: "kubectl/v1.32",
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d1"},"spec":{"replicas":4}}`},
		{name: "get-after-put-scale", method: http.MethodGet, path: deploys + "/d1"},
		{name: "status-patch-resets-spec-and-labels", method: http.MethodPatch, path: deploys + "/d1/status", contentType: mergePatch, userAgent: "ctrl/1",
			body: `{"metadata":{"labels":{"x":"y"}},"spec":{"replicas":9},"status":{"replicas":1,"observedGeneration":1}}`},
		apply("status-apply", deploys, "/d1/status?fieldManager=st", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d1\nstatus:\n  replicas: 2\n"),
		apply("main-conflicts-with-scale", deploys, "/d1?fieldManager=m1", strings.Replace(deployYAML, "replicas: 2", "replicas: 5", 1)),
		apply("main-force", deploys, "/d1?fieldManager=m1&force=true", strings.Replace(deployYAML, "replicas: 2", "replicas: 5", 1)),
		{name: "merge-patch-scale", method: http.MethodPatch, path: deploys + "/d1/scale", contentType: mergePatch, userAgent: "hpa/1", body: `{"spec":{"replicas":1}}`},
		{name: "get-final", method: http.MethodGet, path: deploys + "/d1"},
		{name: "create-with-status", method: http.MethodPost, path: deploys, contentType: jsonBody, userAgent: "kubectl/v1.32.4",
			body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d2"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":3}}`},
		{name: "put-scale-with-another-uid", method: http.MethodPut, path: deploys + "/d1/scale", contentType: jsonBody, userAgent: "kubectl/v1.32",
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d1","uid":"0d2d1a4c-0000-4000-8000-000000000000"},"spec":{"replicas":4}}`},
		{name: "patch-scale-uid", method: http.MethodPatch, path: deploys + "/d1/scale", contentType: mergePatch, userAgent: "kubectl/v1.32",
			body: `{"metadata":{"uid":"0d2d1a4c-0000-4000-8000-000000000000"},"spec":{"replicas":4}}`},
		{name: "put-status-with-spec", method: http.MethodPut, path: deploys + "/d2/status", contentType: jsonBody, userAgent: "ctl/1",
			body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d2"},"spec":{"replicas":7,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":3}}`},
	},
	// Pods: defaults the manager owns on create, the status subresource
	// resetting spec, ownerReferences and deletionTimestamp.
	"pods": {
		apply("apply-create", pods, "/p1?fieldManager=m1",
			"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p1\nspec:\n  containers:\n  - name: c\n    image: nginx\n    ports:\n    - containerPort: 80\n      protocol: TCP\n"),
		{name: "create", method: http.MethodPost, path: pods, contentType: jsonBody, userAgent: "kubectl/v1",
			body: `{"metadata":{"name":"p2","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"0d2d1a4c-0000-4000-8000-000000000001"}]},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}`},
		{name: "status-patch", method: http.MethodPatch, path: pods + "/p2/status", contentType: smPatch, userAgent: "kubelet/v1",
			body: `{"metadata":{"labels":{"l":"v"},"ownerReferences":null},"spec":{"activeDeadlineSeconds":5},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`},
		apply("status-apply", pods, "/p2/status?fieldManager=kl&force=true",
			"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p2\n  labels: {m: mm}\nstatus:\n  conditions:\n  - type: Ready\n    status: \"False\"\n"),
		apply("main-apply-conflicts-with-status", pods, "/p2?fieldManager=m1", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p2\n  labels: {m: x}\n"),
		apply("main-apply", pods, "/p2?fieldManager=m1", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p2\n  labels: {o: x}\n"),
	},
}

// kinds has an apply create (and a status apply) of every served kind:
// each has its schema, its scope, its defaults and reset fields.
var kinds = []step{
	apply("secret", "/api/v1/namespaces/NS/secrets", "/s?fieldManager=m", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  a: b\ndata:\n  c: ZA==\n"),
	// (Endpoints are left out: kube warns on every request to them that
	// v1 Endpoints are deprecated, which this server does not yet.)
	apply("serviceaccount", "/api/v1/namespaces/NS/serviceaccounts", "/sa?fieldManager=m", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\nautomountServiceAccountToken: false\n"),
	apply("limitrange", "/api/v1/namespaces/NS/limitranges", "/lr?fieldManager=m",
		"apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: lr\nspec:\n  limits:\n  - type: Container\n    default:\n      cpu: 100m\n"),
	apply("resourcequota", "/api/v1/namespaces/NS/resourcequotas", "/rq?fieldManager=m",
		"apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: rq\nspec:\n  hard:\n    pods: \"10\"\nstatus:\n  hard:\n    pods: \"5\"\n"),
	apply("resourcequota-status", "/api/v1/namespaces/NS/resourcequotas", "/rq/status?fieldManager=q",
		"apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: rq\nspec:\n  hard:\n    pods: \"1\"\nstatus:\n  hard:\n    pods: \"10\"\n  used:\n    pods: \"0\"\n"),
	apply("podtemplate", "/api/v1/namespaces/NS/podtemplates", "/pt?fieldManager=m",
		"apiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: pt\ntemplate:\n  spec:\n    containers:\n    - name: c\n      image: i\n"),
	apply("replicationcontroller", "/api/v1/namespaces/NS/replicationcontrollers", "/rc?fieldManager=m",
		"apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: rc\nspec:\n  replicas: 1\n  selector: {a: b}\n  template:\n    metadata:\n      labels: {a: b}\n    spec:\n      containers:\n      - name: c\n        image: i\n"),
	apply("replicationcontroller-scale", "/api/v1/namespaces/NS/replicationcontrollers", "/rc/scale?fieldManager=s&force=true",
		"apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: rc\nspec:\n  replicas: 2\n"),
	{name: "replicationcontroller-get", method: http.MethodGet, path: "/api/v1/namespaces/NS/replicationcontrollers/rc"},
	apply("service", "/api/v1/namespaces/NS/services", "/svc?fieldManager=m",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  clusterIP: None\n  selector: {a: b}\n  ports:\n  - port: 80\n"),
	apply("service-status", "/api/v1/namespaces/NS/services", "/svc/status?fieldManager=lb",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nstatus:\n  conditions:\n  - type: Ready\n    status: \"True\"\n    reason: R\n    message: m\n    lastTransitionTime: \"2026-01-01T00:00:00Z\"\n"),
	apply("persistentvolumeclaim", "/api/v1/namespaces/NS/persistentvolumeclaims", "/pvc?fieldManager=m",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: pvc\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"),
	apply("persistentvolumeclaim-status", "/api/v1/namespaces/NS/persistentvolumeclaims", "/pvc/status?fieldManager=ctl",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: pvc\nstatus:\n  phase: Bound\n"),
	apply("event", "/api/v1/namespaces/NS/events", "/ev?fieldManager=m",
		"apiVersion: v1\nkind: Event\nmetadata:\n  name: ev\ninvolvedObject:\n  kind: Pod\n  name: p\n  namespace: NS\nreason: R\nmessage: m\ntype: Normal\n"),
	apply("daemonset", "/apis/apps/v1/namespaces/NS/daemonsets", "/ds?fieldManager=m",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\nspec:\n  selector:\n    matchLabels: {a: b}\n  template:\n    metadata:\n      labels: {a: b}\n    spec:\n      containers:\n      - name: c\n        image: i\n"),
	apply("daemonset-status", "/apis/apps/v1/namespaces/NS/daemonsets", "/ds/status?fieldManager=ctl",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\nstatus:\n  currentNumberScheduled: 1\n  numberMisscheduled: 0\n  desiredNumberScheduled: 1\n  numberReady: 0\n"),
	apply("replicaset", "/apis/apps/v1/namespaces/NS/replicasets", "/rs?fieldManager=m",
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: rs\nspec:\n  selector:\n    matchLabels: {a: b}\n  template:\n    metadata:\n      labels: {a: b}\n    spec:\n      containers:\n      - name: c\n        image: i\n"),
	apply("replicaset-scale", "/apis/apps/v1/namespaces/NS/replicasets", "/rs/scale?fieldManager=s",
		"apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: rs\nspec:\n  replicas: 3\n"),
	{name: "replicaset-get", method: http.MethodGet, path: "/apis/apps/v1/namespaces/NS/replicasets/rs"},
	apply("statefulset", "/apis/apps/v1/namespaces/NS/statefulsets", "/sts?fieldManager=m",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: sts\nspec:\n  serviceName: svc\n  selector:\n    matchLabels: {a: b}\n  template:\n    metadata:\n      labels: {a: b}\n    spec:\n      containers:\n      - name: c\n        image: i\n"),
	apply("statefulset-scale", "/apis/apps/v1/namespaces/NS/statefulsets", "/sts/scale?fieldManager=s",
		"apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: sts\nspec:\n  replicas: 2\n"),
	apply("statefulset-status", "/apis/apps/v1/namespaces/NS/statefulsets", "/sts/status?fieldManager=ctl",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: sts\nstatus:\n  replicas: 1\n  availableReplicas: 0\n"),
	apply("controllerrevision", "/apis/apps/v1/namespaces/NS/controllerrevisions", "/cr?fieldManager=m",
		"apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: cr\nrevision: 1\ndata:\n  a: b\n"),
	apply("lease", "/apis/coordination.k8s.io/v1/namespaces/NS/leases", "/l?fieldManager=m",
		"apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l\nspec:\n  holderIdentity: me\n  leaseDurationSeconds: 10\n"),
	// Cluster-scoped kinds, named after the namespace (unique), and
	// deleted at the end.
	apply("namespace", "/api/v1/namespaces", "/NS-ns?fieldManager=m", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: NS-ns\n  labels: {a: b}\n"),
	apply("namespace-status", "/api/v1/namespaces", "/NS-ns/status?fieldManager=ctl",
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: NS-ns\nspec:\n  finalizers: [x]\nstatus:\n  conditions:\n  - type: NamespaceDeletionDiscoveryFailure\n    status: \"False\"\n"),
	apply("node", "/api/v1/nodes", "/NS-node?fieldManager=m", "apiVersion: v1\nkind: Node\nmetadata:\n  name: NS-node\nspec:\n  podCIDR: 10.0.0.0/24\nstatus:\n  capacity:\n    pods: \"10\"\n"),
	apply("node-status", "/api/v1/nodes", "/NS-node/status?fieldManager=kubelet",
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: NS-node\nspec:\n  unschedulable: true\nstatus:\n  capacity:\n    pods: \"10\"\n"),
	apply("persistentvolume", "/api/v1/persistentvolumes", "/NS-pv?fieldManager=m",
		"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: NS-pv\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /tmp/x\n"),
	apply("persistentvolume-status", "/api/v1/persistentvolumes", "/NS-pv/status?fieldManager=ctl",
		"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: NS-pv\nstatus:\n  phase: Available\n"),
	{name: "delete-namespace", method: http.MethodDelete, path: "/api/v1/namespaces/NS-ns"},
	{name: "delete-node", method: http.MethodDelete, path: "/api/v1/nodes/NS-node"},
	{name: "delete-persistentvolume", method: http.MethodDelete, path: "/api/v1/persistentvolumes/NS-pv"},
}

// ownerRefs has duplicate owner references: kube drops the repeats and
// warns (before recording managed fields on creates and updates, after on
// patches).
const (
	ownerRef  = `{"apiVersion":"v1","kind":"X","name":"x","uid":"0d2d1a4c-0000-4000-8000-000000000001"}`
	ownerRefs = `[` + ownerRef + `,` + ownerRef + `,{"apiVersion":"v1","kind":"Y","name":"x","uid":"0d2d1a4c-0000-4000-8000-000000000001"}]`
)

var ownerReferences = []step{
	{name: "create", method: http.MethodPost, path: cms, contentType: jsonBody, userAgent: "curl/8",
		body: `{"metadata":{"name":"o1","ownerReferences":` + ownerRefs + `},"data":{"a":"b"}}`},
	{name: "update", method: http.MethodPut, path: cms + "/o1", contentType: jsonBody, userAgent: "curl/8",
		body: `{"metadata":{"name":"o1","ownerReferences":` + ownerRefs + `},"data":{"a":"c"}}`},
	{name: "merge-patch", method: http.MethodPatch, path: cms + "/o1", contentType: mergePatch, userAgent: "curl/8",
		body: `{"metadata":{"ownerReferences":[` + ownerRef + `,` + ownerRef + `]}}`},
	apply("apply", cms, "/o2?fieldManager=m", cmYAML("o2", "  ownerReferences:\n  - {apiVersion: v1, kind: X, name: x, uid: 0d2d1a4c-0000-4000-8000-000000000001}\n"+
		"  - {apiVersion: v1, kind: X, name: x, uid: 0d2d1a4c-0000-4000-8000-000000000001}\n")),
}

func init() {
	transcripts["kinds"] = kinds
	transcripts["owner-references"] = ownerReferences
}

const transcriptFile = "testdata/transcript.json"

// TestTranscript replays the transcripts against the server and compares
// every answer (code, whole body, warnings) with kube-apiserver's,
// resourceVersions by their pattern (a no-op write keeps its object's).
// With -record it writes kube's answers instead.
func TestTranscript(t *testing.T) {
	tg := testTarget(t)
	all := map[string][]reference.Step{}
	for name, steps := range transcripts {
		for _, st := range steps {
			all[name] = append(all[name], reference.Step{Name: st.name, Request: reference.Request{
				Method: st.method, Path: st.path, ContentType: st.contentType, UserAgent: st.userAgent, Body: st.body,
			}})
		}
	}
	reference.Replay(t, tg.Target, transcriptFile, all, func(t *testing.T, name string) *reference.Normalizer {
		return reference.NewNormalizer(tg.namespace(t, name))
	})
}
