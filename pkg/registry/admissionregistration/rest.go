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
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes: the stores admission follows its webhooks and policies from.
type GroupStorage struct {
	ValidatingWebhookConfigurations, MutatingWebhookConfigurations *generic.Store
	ValidatingAdmissionPolicies, ValidatingAdmissionPolicyBindings *generic.Store
	MutatingAdmissionPolicies, MutatingAdmissionPolicyBindings     *generic.Store
}

// NewRESTStorageProvider returns the provider of
// admissionregistration.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(admissionregistrationv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage {
		return GroupStorage{
			ValidatingWebhookConfigurations: s[0], MutatingWebhookConfigurations: s[1],
			ValidatingAdmissionPolicies: s[2], ValidatingAdmissionPolicyBindings: s[3],
			MutatingAdmissionPolicies: s[4], MutatingAdmissionPolicyBindings: s[5],
		}
	}, validatingWebhookConfigurations, mutatingWebhookConfigurations,
		validatingAdmissionPolicies, validatingAdmissionPolicyBindings, mutatingAdmissionPolicies, mutatingAdmissionPolicyBindings)
}

// apiExtensions is the category kubectl get api-extensions lists.
var apiExtensions = []string{"api-extensions"}
