package app

import (
	"fmt"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
)

// schedulingPlugins are kube's opt-in plugins that steer pods to nodes:
// PodNodeSelector, PodTolerationRestriction, ExtendedResourceToleration
// (LimitPodHardAntiAffinityTopology needs nothing built).
type schedulingPlugins struct {
	nodeSelector *admission.PodNodeSelector
	tolerations  *admission.PodTolerationRestriction
	extended     admission.ExtendedResourceToleration
}

// schedulingAdmission builds the scheduling plugins over the namespaces'
// store, with their configuration from --admission-control-config-file.
// As kube, it reads a plugin's configuration only when the plugin runs
// (these opt-in ones: when enabled); a bad one then fails the start.
func schedulingAdmission(o *Options, st *stores) (schedulingPlugins, error) {
	var nodeProblems *core.DefaultTolerationSeconds
	if !o.Admission.disabled("DefaultTolerationSeconds") {
		nodeProblems = &core.DefaultTolerationSeconds{
			NotReady: o.Admission.NotReadyTolerationSeconds, Unreachable: o.Admission.UnreachableTolerationSeconds}
	}
	p := schedulingPlugins{
		nodeSelector: &admission.PodNodeSelector{Namespaces: st.core.Namespaces},
		tolerations:  &admission.PodTolerationRestriction{Namespaces: st.core.Namespaces, NodeProblems: nodeProblems},
		extended:     admission.ExtendedResourceToleration{NodeProblems: nodeProblems},
	}
	if o.Admission.enabled("PodNodeSelector") {
		r, err := o.Admission.pluginConfig("PodNodeSelector")
		if err != nil {
			return p, err
		}
		p.nodeSelector.Selectors = admission.ReadPodNodeSelectorConfig(r)
	}
	if o.Admission.enabled("PodTolerationRestriction") {
		r, err := o.Admission.pluginConfig("PodTolerationRestriction")
		if err != nil {
			return p, err
		}
		cfg, err := admission.LoadPodTolerationRestrictionConfig(r)
		if err != nil {
			return p, fmt.Errorf("--admission-control-config-file: PodTolerationRestriction: %w", err)
		}
		p.tolerations.Config = cfg
	}
	return p, nil
}
