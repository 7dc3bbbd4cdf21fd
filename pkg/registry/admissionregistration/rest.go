// Package admissionregistration serves the admissionregistration.k8s.io
// group (v1): validating and mutating webhook configurations, validating
// admission policies (with their status) and their bindings, mutating
// admission policies and their bindings.
//
// It stores them with kube's defaults and validation, CEL expressions
// compiled and type-checked with k8s.io/apiserver's CEL environment, as
// kube does. Calling the webhooks and evaluating the policies is
// admission's business, not this package's. kube also asks its
// authorizer whether the user may read a policy's parameters; this
// server's authorization does not make that check yet.
package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of admissionregistration.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return admissionregistrationv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes: the stores admission follows its webhooks and policies from.
type GroupStorage struct {
	ValidatingWebhookConfigurations, MutatingWebhookConfigurations *generic.Store
	ValidatingAdmissionPolicies, ValidatingAdmissionPolicyBindings *generic.Store
	MutatingAdmissionPolicies, MutatingAdmissionPolicyBindings     *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	info, stores, err := generic.BuildGroupStores(admissionregistrationv1.SchemeGroupVersion, getter,
		validatingWebhookConfigurations,
		mutatingWebhookConfigurations,
		validatingAdmissionPolicies,
		validatingAdmissionPolicyBindings,
		mutatingAdmissionPolicies,
		mutatingAdmissionPolicyBindings,
	)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{
		ValidatingWebhookConfigurations: stores[0], MutatingWebhookConfigurations: stores[1],
		ValidatingAdmissionPolicies: stores[2], ValidatingAdmissionPolicyBindings: stores[3],
		MutatingAdmissionPolicies: stores[4], MutatingAdmissionPolicyBindings: stores[5],
	}, info, nil
}

// apiExtensions is the category kubectl get api-extensions lists.
var apiExtensions = []string{"api-extensions"}
