package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadAdmissionConfig: the AdmissionConfiguration gives PodSecurity
// its configuration, inline or at a path, with kube's reader.
func TestReadAdmissionConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ps.yaml"), []byte("apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: restricted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
	for _, tc := range []struct {
		name, file  string
		wantEnforce string // PodSecurity's default enforce level
		wantErr     string
	}{
		{name: "none", wantEnforce: "privileged"},
		{name: "inline", file: header + "- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults:\n      enforce: baseline\n", wantEnforce: "baseline"},
		{name: "relative path", file: header + "- name: PodSecurity\n  path: ps.yaml\n", wantEnforce: "restricted"},
		{name: "a plugin kube runs only when asked", file: header + "- name: EventRateLimit\n  path: erl.yaml\n", wantEnforce: "privileged"},
		{name: "not an AdmissionConfiguration", file: "apiVersion: v1\nkind: ConfigMap\n", wantErr: `no kind "ConfigMap" is registered`},
		{name: "an unknown field", file: header + "- name: PodSecurity\n  paht: ps.yaml\n", wantErr: `unknown field "plugins[0].paht"`},
		{name: "an invalid PodSecurity level", file: header + "- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults:\n      enforce: strict\n", wantErr: "strict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultAdmissionOptions()
			if tc.file != "" {
				o.ConfigFile = filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
				if err := os.WriteFile(o.ConfigFile, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := o.validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := o.podSecurity.Defaults.Enforce; got != tc.wantEnforce {
				t.Errorf("default enforce %q, want %q", got, tc.wantEnforce)
			}
		})
	}
}
