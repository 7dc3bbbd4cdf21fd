package admissionregistration

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var validatingAdmissionPolicies = generic.Resource{
	Name: "validatingadmissionpolicies", Singular: "validatingadmissionpolicy", Kind: "ValidatingAdmissionPolicy",
	Categories: apiExtensions,
	New:        generic.NewOf[admissionregistrationv1.ValidatingAdmissionPolicy], NewList: generic.NewOf[admissionregistrationv1.ValidatingAdmissionPolicyList],
	Strategy: validatingPolicyStrategy,
	// kube-controller-manager reports the policy's type checking on /status.
	StatusStrategy: generic.StatusStrategy{Main: validatingPolicyStrategy, GroupVersion: "admissionregistration.k8s.io/v1",
		KeepMetadata: true, Validate: validateValidatingPolicyStatus, Warnings: validatingPolicyStrategy.WarningsOnUpdate},
	Table: policyTable("Validations", "Validations indicates the number of validation rules defined in this configuration",
		func(obj runtime.Object) (metav1.ObjectMeta, int, *admissionregistrationv1.ParamKind) {
			p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
			return p.ObjectMeta, len(p.Spec.Validations), p.Spec.ParamKind
		}),
}

var mutatingAdmissionPolicies = generic.Resource{
	Name: "mutatingadmissionpolicies", Singular: "mutatingadmissionpolicy", Kind: "MutatingAdmissionPolicy",
	Categories: apiExtensions,
	New:        generic.NewOf[admissionregistrationv1.MutatingAdmissionPolicy], NewList: generic.NewOf[admissionregistrationv1.MutatingAdmissionPolicyList],
	Strategy: mutatingPolicyStrategy,
	Table: policyTable("Mutations", "Mutation indicates the number of mutations rules defined in this configuration",
		func(obj runtime.Object) (metav1.ObjectMeta, int, *admissionregistrationv1.ParamKind) {
			p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
			return p.ObjectMeta, len(p.Spec.Mutations), p.Spec.ParamKind
		}),
}

// policyTable is kubectl's NAME, the number of rules, PARAMKIND, AGE.
func policyTable(rules, rulesDoc string, row func(runtime.Object) (metav1.ObjectMeta, int, *admissionregistrationv1.ParamKind)) generic.TablePrinter {
	return generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: rules, Type: "integer", Description: rulesDoc},
			{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			m, n, pk := row(obj)
			paramKind := "<unset>"
			if pk != nil {
				paramKind = pk.APIVersion + "/" + pk.Kind
			}
			return []interface{}{m.Name, int64(n), paramKind, generic.TranslateTimestampSince(m.CreationTimestamp)}, nil
		},
	}
}

// defaultMatchResources sets kube v1's defaults of a policy's or a
// binding's match resources: matchPolicy Equivalent, empty (matching)
// selectors, rules of every scope.
func defaultMatchResources(mr *admissionregistrationv1.MatchResources) {
	if mr == nil {
		return
	}
	if mr.MatchPolicy == nil {
		mr.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if mr.NamespaceSelector == nil {
		mr.NamespaceSelector = &metav1.LabelSelector{}
	}
	if mr.ObjectSelector == nil {
		mr.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{mr.ResourceRules, mr.ExcludeResourceRules} {
		for i := range rules {
			defaultRule(&rules[i].Rule)
		}
	}
}

// statusStrategy is a specStrategy of a kind whose status is written
// through /status alone (by kube-controller-manager, for validating
// admission policies).
type statusStrategy struct{ specStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("admissionregistration.k8s.io/v1", "status")
}

// The policies' defaults: failurePolicy Fail, and the defaults of match
// constraints.
var validatingPolicyStrategy = statusStrategy{specStrategy{
	setDefaults: func(obj runtime.Object) {
		spec := &obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec
		defaultPolicy(&spec.FailurePolicy, spec.MatchConstraints)
	},
	validate: func(obj, old runtime.Object) field.ErrorList {
		oldP, _ := old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		return validateValidatingPolicy(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), oldP)
	},
}}

var mutatingPolicyStrategy = specStrategy{
	setDefaults: func(obj runtime.Object) {
		spec := &obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec
		defaultPolicy(&spec.FailurePolicy, spec.MatchConstraints)
	},
	validate: func(obj, old runtime.Object) field.ErrorList {
		oldP, _ := old.(*admissionregistrationv1.MutatingAdmissionPolicy)
		return validateMutatingPolicy(obj.(*admissionregistrationv1.MutatingAdmissionPolicy), oldP)
	},
}

func defaultPolicy(failurePolicy **admissionregistrationv1.FailurePolicyType, mc *admissionregistrationv1.MatchResources) {
	if *failurePolicy == nil {
		*failurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(mc)
}

// validateValidatingPolicyStatus checks the type checking a status write
// reports.
func validateValidatingPolicyStatus(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validatePolicyStatus(&obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status, field.NewPath("status"))
}
