package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
)

// TestAuthorizationFlags: the authorization flags are checked as kube
// checks them (messages of kube-apiserver 1.37.2).
func TestAuthorizationFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "default"},
		{name: "webhook", args: []string{"--authorization-mode=Node,Webhook,RBAC", "--authorization-webhook-config-file=/k"}},
		{name: "webhook without file", args: []string{"--authorization-mode=Webhook"}, wantErr: "authorization-mode Webhook's authorization config file not passed"},
		{name: "file without webhook", args: []string{"--authorization-webhook-config-file=/k"}, wantErr: "cannot specify --authorization-webhook-config-file without mode Webhook"},
		{name: "config file", args: []string{"--authorization-config=/a.yaml"}},
		{name: "config file and mode", args: []string{"--authorization-config=/a.yaml", "--authorization-mode=RBAC"},
			wantErr: "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{name: "config file and a webhook flag", args: []string{"--authorization-config=/a.yaml", "--authorization-webhook-cache-authorized-ttl=1s"},
			wantErr: "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{name: "unknown version", args: []string{"--authorization-mode=Webhook", "--authorization-webhook-config-file=/k", "--authorization-webhook-version=v2"},
			wantErr: `unsupported webhook authorizer version "v2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultAuthOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.addFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestLoadAuthorizationConfiguration: kube's validation of the file, and
// kube-apiserver's own rules on top of it.
func TestLoadAuthorizationConfiguration(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n"
	webhook := "- type: Webhook\n  name: w\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    failurePolicy: NoOpinion\n" +
		"    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: " + kubeconfig + "\n"
	for _, tc := range []struct {
		name, file, wantErr string
	}{
		{name: "node and rbac", file: header + "- type: Node\n  name: node\n- type: RBAC\n  name: rbac\n"},
		{name: "webhook, defaults", file: header + webhook},
		{name: "rbac misnamed", file: header + "- type: RBAC\n  name: myrbac\n", wantErr: "expected name rbac for authorizer RBAC instead of myrbac"},
		{name: "no authorizers", file: header[:len(header)-1] + " []\n", wantErr: "at least one authorization mode must be defined"},
		{name: "rbac twice", file: header + "- type: RBAC\n  name: rbac\n- type: RBAC\n  name: rbac2\n", wantErr: `authorizers[1].type: Duplicate value: "RBAC"`},
		{name: "bad match condition", file: header + webhook + "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions:\n    - expression: request.nope\n",
			wantErr: "compilation failed"},
		{name: "timeout too long", file: strings.Replace(header+webhook, "timeout: 3s", "timeout: 31s", 1), wantErr: "must be > 0s and <= 30s"},
		{name: "ABAC", file: header + "- type: ABAC\n  name: abac\n", wantErr: `Unsupported value: "ABAC"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadAuthorizationConfiguration([]byte(tc.file), authorizationcel.NewDefaultCompiler(), nil)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
			if tc.name == "webhook, defaults" {
				w := cfg.Authorizers[0].Webhook
				if w.AuthorizedTTL.Duration.String() != "5m0s" || w.UnauthorizedTTL.Duration.String() != "30s" || !w.CacheAuthorizedRequests || !w.CacheUnauthorizedRequests {
					t.Errorf("webhook defaults %+v", w)
				}
			}
		})
	}
}
