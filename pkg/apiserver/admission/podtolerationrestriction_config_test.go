package admission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLoadPodTolerationRestrictionConfig: kube's decoding of the
// plugin's Configuration, and its errors.
func TestLoadPodTolerationRestrictionConfig(t *testing.T) {
	t.Parallel()
	const header = "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n"
	typeMeta := metav1.TypeMeta{APIVersion: "podtolerationrestriction.admission.k8s.io/v1alpha1", Kind: "Configuration"}
	for _, tc := range []struct {
		name, data string
		want       *PodTolerationRestrictionConfig
		wantErr    string
	}{
		{name: "YAML", data: header + "default:\n- key: foo\n  operator: Exists\nwhitelist:\n- operator: Exists\n",
			want: &PodTolerationRestrictionConfig{TypeMeta: typeMeta, Default: []corev1.Toleration{fooExists}, Whitelist: []corev1.Toleration{anyTaint}}},
		{name: "JSON, an unknown field ignored", data: `{"apiVersion":"podtolerationrestriction.admission.k8s.io/v1alpha1","kind":"Configuration","other":1,"default":[{"key":"bar","operator":"Exists"}]}`,
			want: &PodTolerationRestrictionConfig{TypeMeta: typeMeta, Default: []corev1.Toleration{barExists}}},
		{name: "fields are case-sensitive", data: header + "Default:\n- key: foo\n  operator: Exists\n",
			want: &PodTolerationRestrictionConfig{TypeMeta: typeMeta}},
		{name: "no kind", data: "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\n",
			wantErr: "Object 'Kind' is missing in 'apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\n'"},
		{name: "no apiVersion", data: "kind: Configuration\n", wantErr: "Object 'apiVersion' is missing in 'kind: Configuration\n'"},
		{name: "another version", data: "apiVersion: podtolerationrestriction.admission.k8s.io/v1\nkind: Configuration\n",
			wantErr: `no kind "Configuration" is registered for version "podtolerationrestriction.admission.k8s.io/v1" in scheme "k8s.io/kubernetes/plugin/pkg/admission/podtolerationrestriction/config.go:32"`},
		{name: "a list that is not", data: header + "default: foo\n",
			wantErr: "json: cannot unmarshal string into Go struct field Configuration.default of type []v1.Toleration"},
		{name: "an invalid toleration", data: header + "whitelist:\n- key: foo\n  operator: Exists\n  value: bar\n",
			wantErr: "invalid config: [podtolerationrestriction.whitelist[0].operator: Invalid value: \"bar\": value must be empty when `operator` is 'Exists']"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadPodTolerationRestrictionConfig(strings.NewReader(tc.data))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got, err := LoadPodTolerationRestrictionConfig(nil); err != nil || len(got.Default)+len(got.Whitelist) != 0 {
		t.Errorf("no configuration: got %+v, %v; want an empty one", got, err)
	}
}
