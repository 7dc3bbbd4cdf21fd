package app

import (
	"context"
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/policy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// admissionPolicies are the admission steps of MutatingAdmissionPolicies
// and ValidatingAdmissionPolicies over the served groups: policies and
// bindings from their own storage, params from any served resource.
type admissionPolicies struct {
	mutating   *policy.Mutating
	validating *policy.Validating
}

func newAdmissionPolicies(groups []rest.APIGroupInfo, st groupStorages, authz authorizer.Authorizer) (*admissionPolicies, error) {
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
	cfg := policy.Config{Namespaces: st.core.Namespaces, Resources: policy.NewResources(resources), Authorizer: authz}
	var p admissionPolicies
	for _, kind := range []string{"mutating", "validating"} {
		if cfg.Policies, err = policyStorage(groups, kind+"admissionpolicies"); err != nil {
			return nil, err
		}
		if cfg.Bindings, err = policyStorage(groups, kind+"admissionpolicybindings"); err != nil {
			return nil, err
		}
		if kind == "mutating" {
			p.mutating = policy.NewMutating(cfg)
		} else {
			p.validating = policy.NewValidating(cfg)
		}
	}
	return &p, nil
}

// run follows the policies until ctx ends.
func (p *admissionPolicies) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		p.mutating.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		p.validating.Run(ctx)
	}()
	wg.Wait()
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
