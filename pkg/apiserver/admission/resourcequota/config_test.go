package resourcequota

import (
	"strings"
	"testing"
)

func TestLoadConfiguration(t *testing.T) {
	cases := []struct {
		name, config string
		wantErr      string
		wantLimited  int
	}{
		{"v1", "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- resource: pods\n  matchContains: [\"requests.cpu\"]\n", "", 1},
		{"v1beta1", "apiVersion: resourcequota.admission.k8s.io/v1beta1\nkind: Configuration\n", "", 0},
		{"unknown field", "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimited: []\n", `unknown field "limited"`, 0},
		{"no resource", "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- matchContains: [\"x\"]\n", "limitedResources[0].resource: Required value", 0},
		{"other kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n", "no kind", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadConfiguration(strings.NewReader(tc.config))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(cfg.LimitedResources); got != tc.wantLimited {
				t.Errorf("got %d limited resources, want %d", got, tc.wantLimited)
			}
		})
	}
	if cfg, err := LoadConfiguration(nil); err != nil || len(cfg.LimitedResources) != 0 {
		t.Errorf("no configuration: got %v, %v", cfg, err)
	}
}
