package admission

import (
	"fmt"

	psconfig "k8s.io/pod-security-admission/admission/api"
	"k8s.io/pod-security-admission/admission/api/load"
	psvalidation "k8s.io/pod-security-admission/admission/api/validation"
)

// LoadPodSecurityConfiguration decodes and validates a
// PodSecurityConfiguration (JSON or YAML, pod-security.admission.config.k8s.io
// v1, v1beta1 or v1alpha1) with kube's defaults; empty data is the
// default configuration.
func LoadPodSecurityConfiguration(data []byte) (*psconfig.PodSecurityConfiguration, error) {
	conf, err := load.LoadFromData(data)
	if err != nil {
		return nil, err
	}
	if errs := psvalidation.ValidatePodSecurityConfiguration(conf); len(errs) > 0 {
		return nil, fmt.Errorf("PodSecurity invalid: %w", errs.ToAggregate())
	}
	return conf, nil
}
