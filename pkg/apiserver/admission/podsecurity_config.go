package admission

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psconfigv1 "k8s.io/pod-security-admission/admission/api/v1"
	psconfigv1alpha1 "k8s.io/pod-security-admission/admission/api/v1alpha1"
	psconfigv1beta1 "k8s.io/pod-security-admission/admission/api/v1beta1"
	psvalidation "k8s.io/pod-security-admission/admission/api/validation"
)

// podSecurityConfigScheme decodes PodSecurityConfiguration files. It is
// built on first use: kube's loader (admission/api/load) builds its
// scheme in an initialiser, at every start of the binary.
var podSecurityConfigScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		psconfig.AddToScheme, psconfigv1alpha1.AddToScheme, psconfigv1beta1.AddToScheme, psconfigv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	// A file of no version given is read as the newest.
	versions := []schema.GroupVersion{psconfigv1.SchemeGroupVersion, psconfigv1beta1.SchemeGroupVersion, psconfigv1alpha1.SchemeGroupVersion}
	return s, s.SetVersionPriority(versions...)
})

// LoadPodSecurityConfiguration decodes and validates a
// PodSecurityConfiguration (JSON or YAML, pod-security.admission.config.k8s.io
// v1, v1beta1 or v1alpha1) with kube's defaults; empty data is the
// default configuration.
func LoadPodSecurityConfiguration(data []byte) (*psconfig.PodSecurityConfiguration, error) {
	conf, err := decodePodSecurityConfiguration(data)
	if err != nil {
		return nil, err
	}
	if errs := psvalidation.ValidatePodSecurityConfiguration(conf); len(errs) > 0 {
		return nil, fmt.Errorf("PodSecurity invalid: %w", errs.ToAggregate())
	}
	return conf, nil
}

// decodePodSecurityConfiguration reads data strictly, as kube's loader;
// empty data is the defaulted v1 configuration.
func decodePodSecurityConfiguration(data []byte) (*psconfig.PodSecurityConfiguration, error) {
	s, err := podSecurityConfigScheme()
	if err != nil {
		return nil, err
	}
	conf := &psconfig.PodSecurityConfiguration{}
	if len(data) == 0 {
		empty := &psconfigv1.PodSecurityConfiguration{}
		s.Default(empty)
		if err := s.Convert(empty, conf, nil); err != nil {
			return nil, err
		}
		return conf, nil
	}
	obj, err := runtime.Decode(serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	conf, ok := obj.(*psconfig.PodSecurityConfiguration)
	if !ok {
		return nil, fmt.Errorf("expected PodSecurityConfiguration, got %T", obj)
	}
	return conf, nil
}
