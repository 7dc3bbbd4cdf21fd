package app

import (
	"fmt"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/eventratelimit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/imagepolicy"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// imagePolicyAdmission builds kube's ImagePolicyWebhook plugin when the
// flags enable it (nil otherwise: it needs a configuration, which a
// server without the plugin need not have), from its configuration in
// --admission-control-config-file and the backend's kubeconfig; a
// missing or bad one fails the start, as in kube.
func imagePolicyAdmission(o *Options) (handlers.Admission, error) {
	if !o.Admission.enabled(imagepolicy.PluginName) {
		return nil, nil
	}
	r, err := o.Admission.pluginConfig(imagepolicy.PluginName)
	if err != nil {
		return nil, err
	}
	cfg, err := imagepolicy.LoadConfiguration(r)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", imagepolicy.PluginName, err)
	}
	p, err := imagepolicy.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", imagepolicy.PluginName, err)
	}
	return p, nil
}

// eventRateLimitAdmission builds kube's EventRateLimit plugin when the
// flags enable it (nil otherwise), from its configuration in
// --admission-control-config-file; a missing or bad one fails the start,
// as in kube (the plugin has no default limits).
func eventRateLimitAdmission(o *Options) (handlers.Admission, error) {
	if !o.Admission.enabled(eventratelimit.PluginName) {
		return nil, nil
	}
	r, err := o.Admission.pluginConfig(eventratelimit.PluginName)
	if err != nil {
		return nil, err
	}
	cfg, err := eventratelimit.LoadConfiguration(r)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", eventratelimit.PluginName, err)
	}
	p, err := eventratelimit.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", eventratelimit.PluginName, err)
	}
	return p, nil
}
