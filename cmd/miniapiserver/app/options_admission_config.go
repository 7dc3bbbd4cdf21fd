package app

import (
	"fmt"
	"io"
	"sync"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	apiserverinstall "k8s.io/apiserver/pkg/apis/apiserver/install"
	psconfig "k8s.io/pod-security-admission/admission/api"

	miniadmission "github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
)

func (o *AdmissionOptions) addConfigFileFlag(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "admission-control-config-file", o.ConfigFile,
		"File with admission control configuration: an AdmissionConfiguration (apiserver.config.k8s.io/v1) whose plugins[] give a plugin's configuration inline (configuration) or in a file (path, relative to this one). Read for PodSecurity, ResourceQuota, ImagePolicyWebhook, PodNodeSelector, PodTolerationRestriction and EventRateLimit.")
}

// apiserverConfigScheme decodes the apiserver.config.k8s.io files
// (AdmissionConfiguration, AuthenticationConfiguration), as kube's readers
// do (their own scheme: nothing else is decoded with it). It is built
// when a file is first read, not at every start.
var apiserverConfigScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiserverinstall.Install(s)
	return s
})

// pluginConfig returns the configuration --admission-control-config-file
// gives plugin name, nil when it gives none (or there is no file), with
// kube's reader: the same formats, paths and errors.
func (o *AdmissionOptions) pluginConfig(name string) (io.Reader, error) {
	if o.ConfigFile == "" {
		return nil, nil
	}
	names := make([]string, 0, len(kubeAdmissionPlugins))
	for _, p := range kubeAdmissionPlugins {
		names = append(names, p.name)
	}
	provider, err := admission.ReadAdmissionConfiguration(names, o.ConfigFile, apiserverConfigScheme())
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %w", err)
	}
	r, err := provider.ConfigFor(name)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", name, err)
	}
	return r, nil
}

// podSecurityConfig is PodSecurity's configuration from
// --admission-control-config-file, kube's default when it gives none.
func (o *AdmissionOptions) podSecurityConfig() (*psconfig.PodSecurityConfiguration, error) {
	r, err := o.pluginConfig("PodSecurity")
	if err != nil {
		return nil, err
	}
	var data []byte
	if r != nil {
		if data, err = io.ReadAll(r); err != nil {
			return nil, fmt.Errorf("--admission-control-config-file: PodSecurity: %w", err)
		}
	}
	conf, err := miniadmission.LoadPodSecurityConfiguration(data)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: PodSecurity: %w", err)
	}
	return conf, nil
}
