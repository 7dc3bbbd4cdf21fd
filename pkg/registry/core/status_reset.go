package core

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// resetsStatus is, to embed in a strategy, the reset fields of a core
// kind's main resource (and of namespaces/finalize): its writes leave the
// status as it was, which only the /status subresource changes, so an
// apply there owns no status field.
type resetsStatus struct{}

// GetResetFields implements rest.ResetFieldsStrategy.
func (resetsStatus) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("v1", "status")
}

// The strategies that reset status through resetsStatus (an override, as
// the pod subresources', would hide it).
var _ = []rest.ResetFieldsStrategy{namespaceStrategy{}, namespaceFinalizeStrategy{}, nodeStrategy{}, persistentVolumeStrategy{},
	persistentVolumeClaimStrategy{}, podStrategy{}, resourceQuotaStrategy{}, serviceStrategy{}}
