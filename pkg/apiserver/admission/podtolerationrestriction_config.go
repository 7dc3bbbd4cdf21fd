package admission

import (
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
)

// PodTolerationRestrictionConfig is kube's configuration of
// PodTolerationRestriction (podtolerationrestriction.admission.k8s.io/
// v1alpha1, kind Configuration): the cluster's default tolerations and
// whitelist, for the namespaces that set none.
type PodTolerationRestrictionConfig struct {
	metav1.TypeMeta `json:",inline"`
	Default         []corev1.Toleration `json:"default,omitempty"`
	Whitelist       []corev1.Toleration `json:"whitelist,omitempty"`
}

// PodTolerationRestrictionConfigKind is the only kind and version kube's
// plugin decodes.
var PodTolerationRestrictionConfigKind = schema.GroupVersionKind{
	Group: "podtolerationrestriction.admission.k8s.io", Version: "v1alpha1", Kind: "Configuration",
}

// podTolerationRestrictionScheme is the name of the scheme kube's loader
// decodes with, which its errors quote.
const podTolerationRestrictionScheme = "k8s.io/kubernetes/plugin/pkg/admission/podtolerationrestriction/config.go:32"

// LoadPodTolerationRestrictionConfig reads the plugin's configuration as
// kube does: none (r nil) is an empty one; else JSON or YAML with kube's
// apiVersion and kind (the same errors when missing or other), fields
// matched case-sensitively, unknown ones ignored, and the tolerations
// validated as a pod's.
func LoadPodTolerationRestrictionConfig(r io.Reader) (*PodTolerationRestrictionConfig, error) {
	if r == nil {
		return &PodTolerationRestrictionConfig{}, nil
	}
	original, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	data, err := yaml.ToJSON(original)
	if err != nil {
		return nil, err
	}
	if err := checkConfigKind(original, data, PodTolerationRestrictionConfigKind, podTolerationRestrictionScheme); err != nil {
		return nil, err
	}
	// The type's name as kube's, for the decoder's messages.
	type Configuration PodTolerationRestrictionConfig
	var cfg Configuration
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &cfg); err != nil {
		return nil, err
	}
	path := field.NewPath("podtolerationrestriction")
	errs := podspec.ValidateTolerations(cfg.Default, path.Child("default"))
	errs = append(errs, podspec.ValidateTolerations(cfg.Whitelist, path.Child("whitelist"))...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid config: %v", errs)
	}
	out := PodTolerationRestrictionConfig(cfg)
	return &out, nil
}

// checkConfigKind refuses data (as JSON; original as given) unless it
// names kind want, with the errors of kube's decoder over a scheme
// (named scheme) that has only that kind.
func checkConfigKind(original, data []byte, want schema.GroupVersionKind, scheme string) error {
	// kube reads apiVersion and kind case-insensitively (encoding/json).
	var meta struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return err
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return err
	}
	switch got := gv.WithKind(meta.Kind); {
	case got.Kind == "":
		return runtime.NewMissingKindErr(string(original))
	case got.Version == "":
		return runtime.NewMissingVersionErr(string(original))
	case got != want:
		return runtime.NewNotRegisteredErrForKind(scheme, got)
	}
	return nil
}
