package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/apis/apiserver/load"
)

// TestDecodeAuthorizationConfigurationAsKube: our decoder of
// --authorization-config gives what kube's reader gives (the same
// configuration, or an error where it errs), empty data included.
func TestDecodeAuthorizationConfigurationAsKube(t *testing.T) {
	for name, data := range map[string]string{
		"empty": "",
		"v1": "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n" +
			"- type: Webhook\n  name: w\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n    failurePolicy: Deny\n    connectionInfo:\n      type: InClusterConfig\n",
		"v1beta1 defaults": "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: w\n  webhook:\n    connectionInfo:\n      type: InClusterConfig\n",
		"an unknown field": "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizer: []\n",
		"another kind":     "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n",
		"not yaml":         "{",
	} {
		t.Run(name, func(t *testing.T) {
			want, wantErr := load.LoadFromData([]byte(data))
			got, err := decodeAuthorizationConfiguration([]byte(data))
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, kube's %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-kube's +ours):\n%s", diff)
			}
		})
	}
}
