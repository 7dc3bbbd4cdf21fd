package app

import (
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/noderestriction"
)

// nodeRestriction is kube's NodeRestriction plugin over the stores it
// reads; it asks a (the server's chain) about the audiences and signers
// a node requests beyond its pods'.
func nodeRestriction(st *stores, a authorizer.Authorizer) *noderestriction.Plugin {
	return &noderestriction.Plugin{
		Pods: st.core.Pods, Nodes: st.core.Nodes, ServiceAccounts: st.core.ServiceAccounts,
		PersistentVolumeClaims: st.core.PersistentVolumeClaims,
		PersistentVolumes:      st.core.PersistentVolumes,
		CSIDrivers:             st.storage.CSIDrivers,
		Authorizer:             a,
	}
}
