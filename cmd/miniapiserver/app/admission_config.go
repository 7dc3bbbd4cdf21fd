package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	psconfig "k8s.io/pod-security-admission/admission/api"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
)

// admissionConfiguration is kube's AdmissionConfiguration
// (apiserver.config.k8s.io): each plugin's configuration, inline or in a
// file of its own.
type admissionConfiguration struct {
	metav1.TypeMeta `json:",inline"`
	Plugins         []admissionPluginConfiguration `json:"plugins"`
}

type admissionPluginConfiguration struct {
	Name string `json:"name"`
	// Path is a file holding the configuration; a relative path is
	// relative to the AdmissionConfiguration's directory, as in kube.
	Path          string                `json:"path,omitempty"`
	Configuration *runtime.RawExtension `json:"configuration,omitempty"`
}

// admissionConfigAPIVersions are the versions of AdmissionConfiguration
// kube-apiserver 1.37 reads.
var admissionConfigAPIVersions = []string{"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", "apiserver.k8s.io/v1alpha1"}

// configuredPlugins are the plugins whose configuration this server
// reads. A configuration for another plugin is refused rather than
// ignored (kube reads it, so ignoring it would change behaviour
// silently); for kube's plugins this server does not run, it is accepted
// only if the plugin is off anyway, as kube does not read it then either.
var configuredPlugins = []string{"PodSecurity"}

// readAdmissionConfig reads --admission-control-config-file ("" is none)
// and returns the PodSecurityConfiguration it gives (kube's default when
// none).
func (o *AdmissionOptions) readAdmissionConfig() (*psconfig.PodSecurityConfiguration, error) {
	if o.ConfigFile == "" {
		return admission.LoadPodSecurityConfiguration(nil)
	}
	fail := func(err error) (*psconfig.PodSecurityConfiguration, error) {
		return nil, fmt.Errorf("--admission-control-config-file: %w", err)
	}
	data, err := os.ReadFile(o.ConfigFile)
	if err != nil {
		return fail(fmt.Errorf("unable to read admission control configuration from %q [%w]", o.ConfigFile, err))
	}
	var cfg admissionConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return fail(err)
	}
	if cfg.Kind != "AdmissionConfiguration" || !slices.Contains(admissionConfigAPIVersions, cfg.APIVersion) {
		return fail(fmt.Errorf("%s, Kind=%s is not an AdmissionConfiguration this server reads (apiVersion %v)",
			cfg.APIVersion, cfg.Kind, admissionConfigAPIVersions))
	}
	var podSecurity []byte
	for _, p := range cfg.Plugins {
		if !slices.Contains(configuredPlugins, p.Name) {
			if defaultOnPlugin(p.Name) && !o.disabled(p.Name) {
				return fail(fmt.Errorf("plugin %q: miniapiserver does not read its configuration", p.Name))
			}
			continue
		}
		if podSecurity, err = pluginConfigData(p, filepath.Dir(o.ConfigFile)); err != nil {
			return fail(err)
		}
	}
	conf, err := admission.LoadPodSecurityConfiguration(podSecurity)
	if err != nil {
		return fail(fmt.Errorf("plugin PodSecurity: %w", err))
	}
	return conf, nil
}

// pluginConfigData is the configuration of p, inline or read from its
// path.
func pluginConfigData(p admissionPluginConfiguration, dir string) ([]byte, error) {
	if p.Configuration != nil {
		return p.Configuration.Raw, nil
	}
	if p.Path == "" {
		return nil, nil
	}
	path := p.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", p.Name, err)
	}
	return data, nil
}
