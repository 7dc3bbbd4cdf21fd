package audit

import (
	"os"
	"path/filepath"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestPolicyEvaluate checks rule matching, as kube's policy checker: the
// first matching rule decides; users, groups, verbs, namespaces,
// resources (with subresource and name wildcards) and non-resource URLs.
func TestPolicyEvaluate(t *testing.T) {
	t.Parallel()
	p := NewPolicy(&auditv1.Policy{
		OmitStages: []auditv1.Stage{auditv1.StageRequestReceived},
		Rules: []auditv1.PolicyRule{
			{Level: auditv1.LevelNone, Users: []string{"system:kube-proxy"}},
			{Level: auditv1.LevelNone, UserGroups: []string{"system:nodes"}, Verbs: []string{"get"}},
			{Level: auditv1.LevelMetadata, NonResourceURLs: []string{"/healthz*", "/version"}},
			{Level: auditv1.LevelRequest, Resources: []auditv1.GroupResources{{Resources: []string{"pods/status"}}}},
			{Level: auditv1.LevelRequest, Resources: []auditv1.GroupResources{{Group: "*", Resources: []string{"*/scale"}}}},
			{Level: auditv1.LevelRequestResponse, Resources: []auditv1.GroupResources{{Resources: []string{"configmaps"}, ResourceNames: []string{"cfg"}}},
				OmitStages: []auditv1.Stage{auditv1.StagePanic}},
			{Level: auditv1.LevelMetadata, Namespaces: []string{"kube-system"}},
			{Level: auditv1.LevelRequest, Resources: []auditv1.GroupResources{{Group: "apps", Resources: []string{"deployments/*"}}}},
		},
	})
	jane := &user.DefaultInfo{Name: "jane", Groups: []string{"dev"}}
	res := func(verb, group, resource, sub, ns, name string, u user.Info) authorizer.Attributes {
		return &authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
	}
	for _, tc := range []struct {
		name  string
		attrs authorizer.Attributes
		want  auditv1.Level
	}{
		{"user", res("list", "", "pods", "", "a", "", &user.DefaultInfo{Name: "system:kube-proxy"}), auditv1.LevelNone},
		{"group and verb", res("get", "", "nodes", "", "", "n", &user.DefaultInfo{Name: "system:node:n", Groups: []string{"system:nodes"}}), auditv1.LevelNone},
		{"group, other verb", res("update", "", "nodes", "", "", "n", &user.DefaultInfo{Name: "system:node:n", Groups: []string{"system:nodes"}}), auditv1.LevelNone},
		{"non-resource prefix", &authorizer.AttributesRecord{User: jane, Verb: "get", Path: "/healthz/etcd"}, auditv1.LevelMetadata},
		{"non-resource exact", &authorizer.AttributesRecord{User: jane, Verb: "get", Path: "/version"}, auditv1.LevelMetadata},
		{"non-resource other", &authorizer.AttributesRecord{User: jane, Verb: "get", Path: "/metrics"}, auditv1.LevelNone},
		{"subresource", res("update", "", "pods", "status", "a", "p", jane), auditv1.LevelRequest},
		{"not the subresource", res("update", "", "pods", "", "a", "p", jane), auditv1.LevelNone},
		{"any group's scale", res("update", "apps", "deployments", "scale", "a", "d", jane), auditv1.LevelRequest},
		{"resource name", res("get", "", "configmaps", "", "a", "cfg", jane), auditv1.LevelRequestResponse},
		{"another name", res("get", "", "configmaps", "", "a", "other", jane), auditv1.LevelNone},
		{"namespace", res("get", "", "configmaps", "", "kube-system", "other", jane), auditv1.LevelMetadata},
		{"resource/*", res("update", "apps", "deployments", "status", "a", "d", jane), auditv1.LevelRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Evaluate(tc.attrs); got.Level != tc.want {
				t.Errorf("level %s, want %s", got.Level, tc.want)
			}
		})
	}
	cfg := p.Evaluate(res("get", "", "configmaps", "", "a", "cfg", jane))
	if !cfg.omits(auditv1.StageRequestReceived) || !cfg.omits(auditv1.StagePanic) || cfg.omits(auditv1.StageResponseComplete) {
		t.Errorf("omitted stages: %v", cfg.OmitStages)
	}
}

// TestLoadPolicyFile checks kube's checks of a policy file and its words.
func TestLoadPolicyFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, policy, wantErr string
	}{
		{"good", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n", ""},
		{"unknown field", "apiVersion: audit.k8s.io/v1\nkind: Policy\nextra: 1\nrules:\n- level: Metadata\n", ""},
		{"no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\n", "loaded illegal policy with 0 rules"},
		{"other version", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: Metadata\n", "unknown group version field audit.k8s.io/v1beta1, Kind=Policy in policy"},
		{"bad level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n",
			`rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`},
		{"no level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- users: [a]\n", "rules[0].level: Required value"},
		{"bad stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Sometimes]\nrules:\n- level: None\n",
			`omitStages[0]: Invalid value: "Sometimes": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic`},
		{"both kinds", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n",
			`rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs`},
		{"bad URL", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [x*y]\n",
			`[rules[0].nonResourceURLs[0]: Invalid value: "x*y": non-resource URL rules must begin with a '/' character, rules[0].nonResourceURLs[0]: Invalid value: "x*y": non-resource URL wildcards '*' must be the final character of the rule]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "policy.yaml")
			if err := os.WriteFile(path, []byte(tc.policy), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPolicyFile(path)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Errorf("error %v, want %s", err, tc.wantErr)
			}
		})
	}
}
