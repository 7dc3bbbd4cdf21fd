package app

import (
	"fmt"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/resourcequota"
)

// resourceQuotaAdmission builds kube's ResourceQuota plugin over the
// quotas' stores, with its configuration from
// --admission-control-config-file (a bad one fails the start, as in
// kube).
func resourceQuotaAdmission(o *Options, st *stores) (*resourcequota.ResourceQuota, error) {
	r, err := o.Admission.pluginConfig(resourcequota.PluginName)
	if err != nil {
		return nil, err
	}
	cfg, err := resourcequota.LoadConfiguration(r)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %s: %w", resourcequota.PluginName, err)
	}
	return resourcequota.New(resourcequota.Config{Quotas: st.core.ResourceQuotas, Status: st.core.ResourceQuotaStatus, Configuration: cfg}), nil
}
