package app

import (
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/admissionpolicy"
)

// admissionPolicies are the admission steps of MutatingAdmissionPolicies
// and ValidatingAdmissionPolicies over the built groups: policies and
// bindings from their own storage, params from any resource. Each follows
// its policies in a loop of the server's (its Run).
type admissionPolicies struct {
	mutating   *admissionpolicy.Mutating
	validating *admissionpolicy.Validating
}

func newAdmissionPolicies(st *stores, authz authorizer.Authorizer) (*admissionPolicies, error) {
	all, err := apiserver.Endpoints(st.groups)
	if err != nil {
		return nil, err
	}
	var resources []admissionpolicy.Resource
	for _, gv := range all {
		for _, e := range gv.Endpoints {
			resources = append(resources, admissionpolicy.Resource{Resource: e.Resource, Subresource: e.Subresource, Kind: e.Kind,
				Namespaced: e.Namespaced, Storage: e.Storage})
		}
	}
	cfg := admissionpolicy.Config{Namespaces: st.core.Namespaces, Resources: admissionpolicy.NewResources(resources), Authorizer: authz}
	mutating, validating := cfg, cfg
	r := st.admissionRegistration
	mutating.Policies, mutating.Bindings = r.MutatingAdmissionPolicies, r.MutatingAdmissionPolicyBindings
	validating.Policies, validating.Bindings = r.ValidatingAdmissionPolicies, r.ValidatingAdmissionPolicyBindings
	return &admissionPolicies{mutating: admissionpolicy.NewMutating(mutating), validating: admissionpolicy.NewValidating(validating)}, nil
}
