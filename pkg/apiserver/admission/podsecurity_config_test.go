package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/pod-security-admission/admission/api/load"
)

// TestDecodePodSecurityConfigurationAsKube: our reader of a
// PodSecurityConfiguration gives what kube's loader gives (the
// configuration with its defaults, or the same error), empty data
// included.
func TestDecodePodSecurityConfigurationAsKube(t *testing.T) {
	const header = "kind: PodSecurityConfiguration\n"
	for name, data := range map[string]string{
		"empty":            "",
		"v1":               "apiVersion: pod-security.admission.config.k8s.io/v1\n" + header + "defaults:\n  enforce: baseline\n  warn-version: v1.30\nexemptions:\n  namespaces: [kube-system]\n  usernames: [u]\n  runtimeClasses: [r]\n",
		"v1beta1 defaults": "apiVersion: pod-security.admission.config.k8s.io/v1beta1\n" + header,
		"v1alpha1":         "apiVersion: pod-security.admission.config.k8s.io/v1alpha1\n" + header + "defaults:\n  audit: restricted\n",
		"an unknown field": "apiVersion: pod-security.admission.config.k8s.io/v1\n" + header + "default: {}\n",
		"no version":       header,
		"another kind":     "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: Other\n",
		"not yaml":         "{",
	} {
		t.Run(name, func(t *testing.T) {
			want, wantErr := load.LoadFromData([]byte(data))
			got, err := decodePodSecurityConfiguration([]byte(data))
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, kube's %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-kube's +ours):\n%s", diff)
			}
		})
	}
}
