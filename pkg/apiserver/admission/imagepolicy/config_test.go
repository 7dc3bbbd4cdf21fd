package imagepolicy

import (
	"strings"
	"testing"
	"time"
)

func TestLoadConfiguration(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    Config
		wantErr string
	}{
		{name: "defaults", file: `{"imagePolicy":{"kubeConfigFile":"k"}}`,
			want: Config{KubeConfigFile: "k", AllowTTL: 5 * time.Minute, DenyTTL: 30 * time.Second, RetryBackoff: 500 * time.Millisecond}},
		{name: "scaled: seconds and milliseconds", file: "imagePolicy:\n  kubeConfigFile: k\n  allowTTL: 50\n  denyTTL: 20\n  retryBackoff: 300\n  defaultAllow: true\n",
			want: Config{KubeConfigFile: "k", AllowTTL: 50 * time.Second, DenyTTL: 20 * time.Second, RetryBackoff: 300 * time.Millisecond, DefaultAllow: true}},
		{name: "-1 turns a setting off", file: `{"imagePolicy":{"allowTTL":-1,"denyTTL":-1,"retryBackoff":-1}}`,
			want: Config{}},
		{name: "apiVersion and kind are ignored, as kube ignores them",
			file: "apiVersion: imagepolicy.config.k8s.io/v1alpha1\nkind: ImagePolicyWebhookConfiguration\nimagePolicy:\n  kubeConfigFile: k\n  allowTTL: 2\n",
			want: Config{KubeConfigFile: "k", AllowTTL: 2 * time.Second, DenyTTL: 30 * time.Second, RetryBackoff: 500 * time.Millisecond}},
		{name: "the lower bound itself is refused", file: `{"imagePolicy":{"allowTTL":1}}`,
			wantErr: "valid value is between 1s and 30m0s, got 1s"},
		{name: "deny TTL above its bound", file: `{"imagePolicy":{"denyTTL":1801}}`,
			wantErr: "valid value is between 1s and 30m0s, got 30m1s"},
		{name: "backoff above its bound", file: `{"imagePolicy":{"retryBackoff":300001}}`,
			wantErr: "valid value is between 1ns and 5m0s, got 5m0.001s"},
		{name: "a negative TTL other than -1", file: `{"imagePolicy":{"allowTTL":-2}}`,
			wantErr: "valid value is between 1s and 30m0s, got -2s"},
		{name: "a duration string is not a number", file: `{"imagePolicy":{"allowTTL":"5m"}}`,
			wantErr: "json: cannot unmarshal string into Go struct field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadConfiguration(strings.NewReader(tc.file))
			if tc.wantErr != "" {
				// kube's own messages exactly; a decoding error by its start.
				if err == nil || (err.Error() != tc.wantErr && !(strings.HasPrefix(tc.wantErr, "json:") && strings.HasPrefix(err.Error(), tc.wantErr))) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLoadConfigurationNone(t *testing.T) {
	if _, err := LoadConfiguration(nil); err == nil || err.Error() != "no config specified" {
		t.Fatalf("err = %v, want kube's %q", err, "no config specified")
	}
}
