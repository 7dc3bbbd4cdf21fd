package app

import (
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/noderestriction"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// nodeRestriction is kube's NodeRestriction plugin over the stores it
// reads; it asks a (the server's chain) about the audiences and signers
// a node requests beyond its pods'.
func nodeRestriction(groups []rest.APIGroupInfo, st groupStorages, a authorizer.Authorizer) *noderestriction.Plugin {
	getter := func(group, resource string) rest.Getter {
		g, _ := servedStorage(groups, group, resource).(rest.Getter)
		return g
	}
	return &noderestriction.Plugin{
		Pods: st.core.Pods, Nodes: st.core.Nodes, ServiceAccounts: st.core.ServiceAccounts,
		PersistentVolumeClaims: getter("", "persistentvolumeclaims"),
		PersistentVolumes:      getter("", "persistentvolumes"),
		CSIDrivers:             getter("storage.k8s.io", "csidrivers"),
		Authorizer:             a,
	}
}
