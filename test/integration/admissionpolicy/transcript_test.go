package admissionpolicy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

type step = reference.Step

const (
	configMapsPath = "/api/v1/namespaces/NS/configmaps"
	secretsPath    = "/api/v1/namespaces/NS/secrets"
	// serviceAccountsPath: the reference runs no controller manager, the
	// test's namespace has only the service account the test creates.
	serviceAccountsPath = "/api/v1/namespaces/NS/serviceaccounts"
	groupPath           = "/apis/admissionregistration.k8s.io/v1/"
)

var (
	steps  = reference.Steps{UserAgent: userAgent}
	create = steps.Create
	patch  = steps.Patch
	del    = steps.Delete
	put    = steps.Put
)

// inNS selects the objects of the test's namespace only: the policies
// of parallel tests never meet.
const inNS = `"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"NS"}}`

// policySetup is a policy of a transcript with its bindings and a
// dry-run request that the policy answers once it is in force.
type policySetup struct {
	// kind is "validating" or "mutating".
	kind     string
	policy   string
	bindings []string
	probe    reference.Request
	// probeCode is the probe's answer once the policy is in force; a
	// probeWarning must come with it, and probeBody be in its body.
	probeCode    int
	probeWarning bool
	probeBody    string
}

// validatingSetup are the policies of the validating transcript.
var validatingSetup = []policySetup{{
	kind: "validating",
	policy: `{"metadata":{"name":"NS-deny"},"spec":{
	  "matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["configmaps"]}],` + inNS + `,
	    "objectSelector":{"matchExpressions":[{"key":"skip","operator":"DoesNotExist"}]}},
	  "variables":[{"name":"name","expression":"object.metadata.name"}],
	  "matchConditions":[{"name":"not-params","expression":"object.metadata.name != 'limits' && object.metadata.name != 'selected'"}],
	  "validations":[
	    {"expression":"!has(object.data) || !('forbidden' in object.data)","message":"data must not have the key forbidden"},
	    {"expression":"variables.name.size() < 20","messageExpression":"'name too long: ' + variables.name"},
	    {"expression":"!variables.name.startsWith('secret')","reason":"Forbidden"},
	    {"expression":"!has(object.metadata.labels) || !('fail' in object.metadata.labels) || object.data['nokey'] == 'x'"},
	    {"expression":"authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"}]}}`,
	bindings:  []string{`{"metadata":{"name":"NS-deny"},"spec":{"policyName":"NS-deny","validationActions":["Deny"]}}`},
	probe:     reference.Request{Method: http.MethodPost, Path: configMapsPath + "?dryRun=All", Body: `{"metadata":{"name":"secret-probe"}}`},
	probeCode: http.StatusForbidden,
}, {
	kind: "validating",
	policy: `{"metadata":{"name":"NS-warn"},"spec":{"failurePolicy":"Ignore",
	  "matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}],` + inNS + `},
	  "validations":[
	    {"expression":"!has(object.metadata.labels) || !('warn' in object.metadata.labels)","message":"labelled warn"},
	    {"expression":"!has(object.metadata.labels) || !('ignore' in object.metadata.labels) || object.data['nokey'] == 'x'"}],
	  "auditAnnotations":[{"key":"name","valueExpression":"string(object.metadata.name)"}]}}`,
	bindings: []string{`{"metadata":{"name":"NS-warn"},"spec":{"policyName":"NS-warn","validationActions":["Warn","Audit"]}}`},
	probe: reference.Request{Method: http.MethodPost, Path: configMapsPath + "?dryRun=All",
		Body: `{"metadata":{"name":"probe","labels":{"warn":"yes"}}}`},
	probeCode: http.StatusCreated, probeWarning: true,
}, {
	kind: "validating",
	policy: `{"metadata":{"name":"NS-params"},"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},
	  "matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["secrets"]}],` + inNS + `},
	  "validations":[{"expression":"object.metadata.name != params.data.banned","messageExpression":"'banned by ' + params.metadata.name + ' (' + params.kind + ')'"}]}}`,
	bindings: []string{
		`{"metadata":{"name":"NS-params"},"spec":{"policyName":"NS-params","validationActions":["Deny"],
		  "paramRef":{"name":"limits","namespace":"NS","parameterNotFoundAction":"Deny"}}}`,
		`{"metadata":{"name":"NS-params-selector"},"spec":{"policyName":"NS-params","validationActions":["Deny"],
		  "paramRef":{"selector":{"matchLabels":{"param":"yes"}},"parameterNotFoundAction":"Allow"},
		  "matchResources":{"namespaceSelector":{},"objectSelector":{"matchLabels":{"selected":"yes"}}}}}`,
		`{"metadata":{"name":"NS-params-missing"},"spec":{"policyName":"NS-params","validationActions":["Deny"],
		  "paramRef":{"name":"missing","parameterNotFoundAction":"Deny"},
		  "matchResources":{"namespaceSelector":{},"objectSelector":{"matchLabels":{"missing":"yes"}}}}}`,
	},
	// The params a selector picks are the last to be seen (kube reads them
	// from an informer, not live).
	probe: reference.Request{Method: http.MethodPost, Path: secretsPath + "?dryRun=All",
		Body: `{"metadata":{"name":"selected-banned","labels":{"selected":"yes"}}}`},
	probeCode: http.StatusUnprocessableEntity,
}}

// badParamKind is a policy whose paramKind no server serves.
var badParamKind = policySetup{
	kind: "validating",
	policy: `{"metadata":{"name":"NS-badparam"},"spec":{"paramKind":{"apiVersion":"example.com/v1","kind":"Nope"},
	  "matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["serviceaccounts"]}],` + inNS + `},
	  "validations":[{"expression":"true"}]}}`,
	bindings:  []string{`{"metadata":{"name":"NS-badparam"},"spec":{"policyName":"NS-badparam","validationActions":["Deny"],"paramRef":{"name":"x","parameterNotFoundAction":"Allow"}}}`},
	probe:     reference.Request{Method: http.MethodPost, Path: serviceAccountsPath + "?dryRun=All", Body: `{"metadata":{"name":"probe"}}`},
	probeCode: http.StatusUnprocessableEntity,
}

// params are the ConfigMaps the params policy reads.
var params = []string{
	`{"metadata":{"name":"limits"},"data":{"banned":"banned-name"}}`,
	`{"metadata":{"name":"selected","labels":{"param":"yes"}},"data":{"banned":"selected-banned"}}`,
}

var transcripts = map[string][]step{"validating": {
	create("admitted", configMapsPath, `{"metadata":{"name":"ok"},"data":{"a":"b"}}`),
	create("message", configMapsPath, `{"metadata":{"name":"bad"},"data":{"forbidden":"x"}}`),
	create("messageExpression", configMapsPath, `{"metadata":{"name":"a-name-much-too-long-for-it"}}`),
	create("reason Forbidden, the expression as the message", configMapsPath, `{"metadata":{"name":"secret-thing"}}`),
	create("a runtime error under failurePolicy Fail", configMapsPath, `{"metadata":{"name":"fails","labels":{"fail":"yes"}}}`),
	create("Warn", configMapsPath, `{"metadata":{"name":"warned","labels":{"warn":"yes"}}}`),
	create("a runtime error under failurePolicy Ignore", configMapsPath, `{"metadata":{"name":"ignored","labels":{"ignore":"yes"}}}`),
	create("the object selector leaves it out", configMapsPath, `{"metadata":{"name":"skipped","labels":{"skip":"yes"}},"data":{"forbidden":"x"}}`),
	patch("an update", configMapsPath+"/ok", `{"data":{"forbidden":"x"}}`),
	create("a dry run", configMapsPath+"?dryRun=All", `{"metadata":{"name":"dry"},"data":{"forbidden":"x"}}`),
	del("deletes are not matched", configMapsPath+"/ok"),
	create("params by name", secretsPath, `{"metadata":{"name":"banned-name"}}`),
	create("params admit", secretsPath, `{"metadata":{"name":"fine"}}`),
	create("params by selector", secretsPath, `{"metadata":{"name":"selected-banned","labels":{"selected":"yes"}}}`),
	create("a missing param with parameterNotFoundAction Deny", secretsPath, `{"metadata":{"name":"m","labels":{"missing":"yes"}}}`),
	create("an unknown paramKind", serviceAccountsPath, `{"metadata":{"name":"sa"}}`),
}}

// setups are the policies of each transcript.
var setups = map[string][]policySetup{"validating": append(validatingSetup, badParamKind), "mutating": mutatingSetup}

// TestTranscript installs the policies in the transcript's namespace,
// waits until each is in force, and compares every answer (code, whole
// body, warnings) with kube-apiserver's. With -record it writes kube's
// answers instead.
//
// Record against a freshly started reference: kube 1.37.2, once every
// policy with a paramKind was deleted, restarts its param informer and
// then never sees the params a binding's selector picks (the probe of
// NS-params times out).
func TestTranscript(t *testing.T) {
	tg := reference.For(t, srv)
	reference.Replay(t, tg, "testdata/transcript.json", transcripts, func(t *testing.T, transcript string) *reference.Normalizer {
		ns := tg.TestNamespace(t, userAgent, configMapsPath, secretsPath)
		installPolicies(t, tg, ns, setups[transcript])
		n := reference.NewNormalizer(ns)
		n.HideListVersions = true
		return n
	})
}

// installPolicies creates the params, policies and bindings of setup in
// ns, removed when the test ends, and waits until every policy answers
// its probe.
func installPolicies(t *testing.T, tg *reference.Target, ns string, setup []policySetup) {
	t.Helper()
	send := func(method, path, body string) reference.Response {
		return tg.Do(t, reference.Request{Method: method, Path: strings.ReplaceAll(path, "NS", ns),
			ContentType: "application/json", UserAgent: userAgent, Body: strings.ReplaceAll(body, "NS", ns)})
	}
	mustCreate := func(path, body string) {
		if r := send(http.MethodPost, path, body); r.Code != http.StatusCreated {
			t.Fatalf("creating %s: %d %s", body, r.Code, r.Body)
		}
	}
	for _, p := range params {
		mustCreate(configMapsPath, p)
	}
	for _, s := range setup {
		policies, bindings := groupPath+s.kind+"admissionpolicies", groupPath+s.kind+"admissionpolicybindings"
		mustCreate(policies, s.policy)
		t.Cleanup(func() { send(http.MethodDelete, policies+"/"+name(s.policy, ns), "") })
		for _, b := range s.bindings {
			mustCreate(bindings, b)
			t.Cleanup(func() { send(http.MethodDelete, bindings+"/"+name(b, ns), "") })
		}
	}
	for _, s := range setup {
		for i := 0; ; i++ {
			r := send(s.probe.Method, s.probe.Path, s.probe.Body)
			if r.Code == s.probeCode && (!s.probeWarning || len(r.Warnings) > 0) && strings.Contains(string(r.Body), s.probeBody) {
				break
			}
			if i == 100 {
				t.Fatalf("policy %s is not in force: %d %s", name(s.policy, ns), r.Code, r.Body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// name is the metadata.name of a policy or binding body, in ns.
func name(body, ns string) string {
	const key = `"name":"`
	i := strings.Index(body, key) + len(key)
	return strings.ReplaceAll(body[i:i+strings.Index(body[i:], `"`)], "NS", ns)
}
