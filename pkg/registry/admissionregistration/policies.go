package admissionregistration

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
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

var validatingAdmissionPolicyBindings = generic.Resource{
	Name: "validatingadmissionpolicybindings", Singular: "validatingadmissionpolicybinding", Kind: "ValidatingAdmissionPolicyBinding",
	Categories: apiExtensions,
	New:        generic.NewOf[admissionregistrationv1.ValidatingAdmissionPolicyBinding], NewList: generic.NewOf[admissionregistrationv1.ValidatingAdmissionPolicyBindingList],
	Strategy: validatingBindingStrategy,
	Table: bindingTable(func(obj runtime.Object) (metav1.ObjectMeta, string, *admissionregistrationv1.ParamRef) {
		b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		return b.ObjectMeta, b.Spec.PolicyName, b.Spec.ParamRef
	}),
}

var mutatingAdmissionPolicyBindings = generic.Resource{
	Name: "mutatingadmissionpolicybindings", Singular: "mutatingadmissionpolicybinding", Kind: "MutatingAdmissionPolicyBinding",
	Categories: apiExtensions,
	New:        generic.NewOf[admissionregistrationv1.MutatingAdmissionPolicyBinding], NewList: generic.NewOf[admissionregistrationv1.MutatingAdmissionPolicyBindingList],
	Strategy: mutatingBindingStrategy,
	Table: bindingTable(func(obj runtime.Object) (metav1.ObjectMeta, string, *admissionregistrationv1.ParamRef) {
		b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
		return b.ObjectMeta, b.Spec.PolicyName, b.Spec.ParamRef
	}),
}

// bindingTable is kubectl's NAME POLICYNAME PARAMREF AGE.
func bindingTable(row func(runtime.Object) (metav1.ObjectMeta, string, *admissionregistrationv1.ParamRef)) generic.TablePrinter {
	return generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
			{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			m, policy, pr := row(obj)
			param := "<unset>"
			switch {
			case pr == nil:
			case pr.Name != "" && pr.Namespace != "":
				param = pr.Namespace + "/" + pr.Name
			case pr.Name != "":
				param = "*/" + pr.Name
			case pr.Selector != nil:
				param = pr.Selector.String()
			}
			return []interface{}{m.Name, policy, param, generic.TranslateTimestampSince(m.CreationTimestamp)}, nil
		},
	}
}

// The bindings' defaults are those of their match resources; an update
// is validated as a create.
var validatingBindingStrategy = specStrategy{
	setDefaults: func(obj runtime.Object) {
		defaultMatchResources(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
	},
	validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateValidatingBinding(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
	},
}

var mutatingBindingStrategy = specStrategy{
	setDefaults: func(obj runtime.Object) {
		defaultMatchResources(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
	},
	validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateMutatingBinding(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding))
	},
}

var validationActions = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))

// validateValidatingBinding is kube's, then the rules kube v1.37 states
// declaratively at beta: a policy name and at least one validation
// action are required (their messages after the others).
func validateValidatingBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validatePolicyName(b.Spec.PolicyName, spec.Child("policyName"))...)
	allErrs = append(allErrs, validateParamRef(b.Spec.ParamRef, spec.Child("paramRef"))...)
	allErrs = append(allErrs, validateMatchResources(b.Spec.MatchResources, spec.Child("matchResources"))...)
	actions := spec.Child("validationActions")
	seen := sets.New[string]()
	for i, a := range b.Spec.ValidationActions {
		if !validationActions.Has(string(a)) {
			allErrs = append(allErrs, field.NotSupported(actions.Index(i), a, sets.List(validationActions)))
		}
		if seen.Has(string(a)) {
			allErrs = append(allErrs, field.Duplicate(actions.Index(i), a))
		}
		seen.Insert(string(a))
	}
	if seen.Has(string(admissionregistrationv1.Deny)) && seen.Has(string(admissionregistrationv1.Warn)) {
		allErrs = append(allErrs, field.Invalid(actions, b.Spec.ValidationActions,
			"must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if b.Spec.PolicyName == "" {
		allErrs = append(allErrs, field.Required(spec.Child("policyName"), ""))
	}
	if len(b.Spec.ValidationActions) == 0 {
		allErrs = append(allErrs, field.Required(actions, ""))
	}
	return allErrs
}

// validatePolicyName checks a set name (a missing one is reported by
// the callers, where kube does).
func validatePolicyName(name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		return nil
	}
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

func validateMutatingBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if b.Spec.PolicyName == "" {
		allErrs = append(allErrs, field.Required(spec.Child("policyName"), ""))
	}
	allErrs = append(allErrs, validatePolicyName(b.Spec.PolicyName, spec.Child("policyName"))...)
	allErrs = append(allErrs, validateParamRef(b.Spec.ParamRef, spec.Child("paramRef"))...)
	if mr := b.Spec.MatchResources; mr != nil {
		allErrs = append(allErrs, validateMatchResources(mr, spec.Child("matchResources"))...)
		allErrs = append(allErrs, validateMutatingOperations(mr.ResourceRules, spec.Child("matchResources", "resourceRules", "operations"))...)
	}
	return allErrs
}
