package app

import (
	"fmt"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// resourceQuotaAdmission builds kube's ResourceQuota plugin over the
// served quotas, with its configuration from
// --admission-control-config-file (a bad one fails the start, as in
// kube).
func resourceQuotaAdmission(o *Options, groups []rest.APIGroupInfo) (*resourcequota.ResourceQuota, error) {
	r, err := o.Admission.pluginConfig(resourcequota.PluginName)
	if err != nil {
		return nil, err
	}
	cfg, err := resourcequota.LoadConfiguration(r)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", resourcequota.PluginName, err)
	}
	quotas, ok := servedStorage(groups, "", "resourcequotas").(rest.Lister)
	if !ok {
		return nil, fmt.Errorf("admission: %s: resourcequotas are not served", resourcequota.PluginName)
	}
	status, ok := servedStorage(groups, "", "resourcequotas/status").(rest.Updater)
	if !ok {
		return nil, fmt.Errorf("admission: %s: resourcequotas/status is not served", resourcequota.PluginName)
	}
	return resourcequota.New(resourcequota.Config{Quotas: quotas, Status: status, Configuration: cfg}), nil
}
