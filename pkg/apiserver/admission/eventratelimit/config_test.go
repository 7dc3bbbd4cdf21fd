package eventratelimit

import (
	"strings"
	"testing"
)

func TestLoadConfiguration(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    []Limit
		wantErr string // exact, or a prefix when it ends in "..."
	}{
		{name: "JSON", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"Server","qps":5,"burst":10}]}`,
			want: []Limit{{Type: ServerLimitType, QPS: 5, Burst: 10}}},
		{name: "YAML, unknown fields ignored", file: "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nextra: 1\nlimits:\n- type: Namespace\n  qps: 1\n  burst: 2\n  cacheSize: 3\n- type: SourceAndObject\n  qps: 4\n  burst: 5\n",
			want: []Limit{{Type: NamespaceLimitType, QPS: 1, Burst: 2, CacheSize: 3}, {Type: SourceAndObjectLimitType, QPS: 4, Burst: 5}}},
		{name: "field names are case sensitive", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"User","QPS":5,"burst":10}]}`,
			wantErr: "limits[0].qps: Invalid value: 0: must be positive"},
		{name: "no limits", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[]}`,
			wantErr: "limits: Invalid value: []: must not be empty"},
		{name: "unknown type", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"Pod","qps":1,"burst":1}]}`,
			wantErr: `limits[0].type: Unsupported value: "Pod": supported values: "Server", "Namespace", "User", "SourceAndObject"`},
		{name: "several errors", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"User","qps":0,"burst":-1,"cacheSize":-1}]}`,
			wantErr: "[limits[0].burst: Invalid value: -1: must be positive, limits[0].qps: Invalid value: 0: must be positive, limits[0].cacheSize: Invalid value: -1: must not be negative]"},
		{name: "a Server limit's cacheSize is not checked", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","kind":"Configuration","limits":[{"type":"Server","qps":1,"burst":1,"cacheSize":-1}]}`,
			want: []Limit{{Type: ServerLimitType, QPS: 1, Burst: 1, CacheSize: -1}}},
		{name: "no kind", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1alpha1","limits":[]}`,
			wantErr: "Object 'Kind' is missing in ..."},
		{name: "another version", file: `{"apiVersion":"eventratelimit.admission.k8s.io/v1","kind":"Configuration"}`,
			wantErr: `no kind "Configuration" is registered for version "eventratelimit.admission.k8s.io/v1" in scheme ...`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadConfiguration(strings.NewReader(tc.file))
			if tc.wantErr != "" {
				prefix, isPrefix := strings.CutSuffix(tc.wantErr, "...")
				if err == nil || (err.Error() != tc.wantErr && !(isPrefix && strings.HasPrefix(err.Error(), prefix))) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Limits) != len(tc.want) {
				t.Fatalf("limits = %+v, want %+v", got.Limits, tc.want)
			}
			for i := range tc.want {
				if got.Limits[i] != tc.want[i] {
					t.Fatalf("limits = %+v, want %+v", got.Limits, tc.want)
				}
			}
		})
	}
}

// TestLoadConfigurationNone: kube's default has no limits, which its
// validation refuses.
func TestLoadConfigurationNone(t *testing.T) {
	if _, err := LoadConfiguration(nil); err == nil || err.Error() != "limits: Invalid value: null: must not be empty" {
		t.Fatalf("err = %v", err)
	}
}
