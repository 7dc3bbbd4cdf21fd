package admissionpolicy

import (
	"net/http"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// configMapRules match the configmaps of the test's namespace.
const configMapRules = `"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["configmaps"]}],` + inNS + `}`

// countExpression adds one to the annotation "count".
const countExpression = `Object{metadata: Object.metadata{annotations: {'count': string(int(has(object.metadata.annotations) && 'count' in object.metadata.annotations ? object.metadata.annotations['count'] : '0') + 1)}}}`

// mutatingSetup are the policies of the mutating transcript.
var mutatingSetup = []policySetup{{
	kind: "mutating",
	policy: `{"metadata":{"name":"NS-label"},"spec":{` + configMapRules + `,"reinvocationPolicy":"Never",
	  "mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{metadata: Object.metadata{labels: {'mutated': 'yes'}}}"}}]}}`,
	bindings:  []string{`{"metadata":{"name":"NS-label"},"spec":{"policyName":"NS-label"}}`},
	probe:     reference.Request{Method: http.MethodPost, Path: configMapsPath + "?dryRun=All", Body: `{"metadata":{"name":"probe"}}`},
	probeCode: http.StatusCreated, probeBody: `"mutated":"yes"`,
}, {
	kind: "mutating",
	policy: `{"metadata":{"name":"NS-jsonpatch"},"spec":{` + configMapRules + `,"reinvocationPolicy":"Never",
	  "matchConditions":[{"name":"has-data","expression":"has(object.data)"}],
	  "mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/data/added', value: 'by ' + request.operation}]"}}]}}`,
	bindings: []string{`{"metadata":{"name":"NS-jsonpatch"},"spec":{"policyName":"NS-jsonpatch"}}`},
	probe: reference.Request{Method: http.MethodPost, Path: configMapsPath + "?dryRun=All",
		Body: `{"metadata":{"name":"probe"},"data":{"a":"b"}}`},
	probeCode: http.StatusCreated, probeBody: `"added":"by CREATE"`,
}, {
	kind: "mutating",
	policy: `{"metadata":{"name":"NS-count"},"spec":{` + configMapRules + `,"reinvocationPolicy":"IfNeeded",
	  "matchConditions":[{"name":"counted","expression":"has(object.metadata.labels) && 'count' in object.metadata.labels"}],
	  "mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"` + countExpression + `"}}]}}`,
	bindings: []string{`{"metadata":{"name":"NS-count"},"spec":{"policyName":"NS-count"}}`},
	probe: reference.Request{Method: http.MethodPost, Path: configMapsPath + "?dryRun=All",
		Body: `{"metadata":{"name":"probe","labels":{"count":"yes"}}}`},
	probeCode: http.StatusCreated, probeBody: `"count":"`,
}, {
	kind: "mutating",
	policy: `{"metadata":{"name":"NS-broken"},"spec":{` + configMapRules + `,"reinvocationPolicy":"Never",
	  "matchConditions":[{"name":"broken","expression":"has(object.metadata.labels) && 'broken' in object.metadata.labels"}],
	  "mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'replace', path: '/spec/missing', value: 'x'}]"}}]}}`,
	bindings: []string{`{"metadata":{"name":"NS-broken"},"spec":{"policyName":"NS-broken"}}`},
	probe: reference.Request{Method: http.MethodPost, Path: configMapsPath + "?dryRun=All",
		Body: `{"metadata":{"name":"probe","labels":{"broken":"yes"}}}`},
	probeCode: http.StatusForbidden,
}, {
	kind: "mutating",
	policy: `{"metadata":{"name":"NS-params"},"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"reinvocationPolicy":"Never",
	  "matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["secrets"]}],` + inNS + `},
	  "mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{metadata: Object.metadata{labels: {'param': params.data.banned}}}"}}]}}`,
	bindings:  []string{`{"metadata":{"name":"NS-params"},"spec":{"policyName":"NS-params","paramRef":{"name":"limits","namespace":"NS","parameterNotFoundAction":"Deny"}}}`},
	probe:     reference.Request{Method: http.MethodPost, Path: secretsPath + "?dryRun=All", Body: `{"metadata":{"name":"probe"}}`},
	probeCode: http.StatusCreated, probeBody: `"param":"banned-name"`,
}}

func init() {
	transcripts["mutating"] = []step{
		create("an apply configuration", configMapsPath, `{"metadata":{"name":"plain"}}`),
		create("a JSON patch after it", configMapsPath, `{"metadata":{"name":"patched"},"data":{"a":"b"}}`),
		create("reinvocationPolicy IfNeeded", configMapsPath, `{"metadata":{"name":"counted","labels":{"count":"yes"}}}`),
		create("a failing patch under failurePolicy Fail", configMapsPath, `{"metadata":{"name":"broken","labels":{"broken":"yes"}}}`),
		patch("an update is mutated too", configMapsPath+"/patched", `{"metadata":{"labels":{"mutated":null}},"data":{"added":null}}`),
		put("a replace", configMapsPath+"/plain", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"},"data":{"x":"y"}}`),
		create("params", secretsPath, `{"metadata":{"name":"s"}}`),
		create("a dry run", configMapsPath+"?dryRun=All", `{"metadata":{"name":"dry","labels":{"count":"yes"}},"data":{"a":"b"}}`),
	}
}
