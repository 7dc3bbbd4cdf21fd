package app

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/policy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// validatingPolicies builds the ValidatingAdmissionPolicy admission step
// over the served groups: policies and bindings from their own storage,
// params from any served resource.
func validatingPolicies(groups []rest.APIGroupInfo, st groupStorages, authz authorizer.Authorizer) (*policy.Validating, error) {
	all, err := apiserver.Endpoints(groups)
	if err != nil {
		return nil, err
	}
	var resources []policy.Resource
	for _, gv := range all {
		for _, e := range gv.Endpoints {
			resources = append(resources, policy.Resource{Resource: e.Resource, Subresource: e.Subresource, Kind: e.Kind,
				Namespaced: e.Namespaced, Storage: e.Storage})
		}
	}
	pol, err := policyStorage(groups, "validatingadmissionpolicies")
	if err != nil {
		return nil, err
	}
	bind, err := policyStorage(groups, "validatingadmissionpolicybindings")
	if err != nil {
		return nil, err
	}
	return policy.NewValidating(policy.Config{Policies: pol, Bindings: bind, Namespaces: st.core.Namespaces,
		Resources: policy.NewResources(resources), Authorizer: authz}), nil
}

// policyStorage finds the admissionregistration.k8s.io/v1 storage of
// resource.
func policyStorage(groups []rest.APIGroupInfo, resource string) (policy.Storage, error) {
	for i := range groups {
		if groups[i].GroupName != admissionregistrationv1.GroupName {
			continue
		}
		if s, ok := groups[i].VersionedResourcesStorageMap["v1"][resource].(policy.Storage); ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%s.%s is not served", resource, admissionregistrationv1.GroupName)
}
