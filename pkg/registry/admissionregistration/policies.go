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
	Categories:           apiExtensions,
	New:                  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
	NewList:              func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
	Strategy:             validatingPolicyStrategy{},
	StatusStrategy:       validatingPolicyStatusStrategy{},
	FieldLabelConversion: generic.DefaultFieldLabelConversion,
	Table: policyTable("Validations", "Validations indicates the number of validation rules defined in this configuration",
		func(obj runtime.Object) (metav1.ObjectMeta, int, *admissionregistrationv1.ParamKind) {
			p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
			return p.ObjectMeta, len(p.Spec.Validations), p.Spec.ParamKind
		}),
}

var mutatingAdmissionPolicies = generic.Resource{
	Name: "mutatingadmissionpolicies", Singular: "mutatingadmissionpolicy", Kind: "MutatingAdmissionPolicy",
	Categories:           apiExtensions,
	New:                  func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
	NewList:              func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} },
	Strategy:             mutatingPolicyStrategy{},
	FieldLabelConversion: generic.DefaultFieldLabelConversion,
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

type validatingPolicyStrategy struct{ configStrategy }

// Default implements rest.Defaulter: failurePolicy Fail, and the
// defaults of match constraints.
func (validatingPolicyStrategy) Default(obj runtime.Object) {
	spec := &obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec
	if spec.FailurePolicy == nil {
		spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(spec.MatchConstraints)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (validatingPolicyStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("admissionregistration.k8s.io/v1", "status")
}

func (validatingPolicyStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
	setGeneration(obj, nil, true)
}

func (validatingPolicyStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
	setGeneration(obj, old, generic.SpecChanged(obj, old))
}

func (validatingPolicyStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	return append(validateValidatingPolicy(p, nil), validateStaticSuffix(obj)...)
}

func (validatingPolicyStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateValidatingPolicy(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy))
}

func (validatingPolicyStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return staticSuffixWarnings(obj)
}

// validatingPolicyStatusStrategy serves validatingadmissionpolicies/status,
// where kube-controller-manager reports the policy's type checking.
type validatingPolicyStatusStrategy struct{ validatingPolicyStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (validatingPolicyStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("admissionregistration.k8s.io/v1", "spec", "metadata")
}

func (validatingPolicyStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	p, oldP := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	p.Spec = oldP.Spec
	metav1.ResetObjectMetaForStatus(&p.ObjectMeta, &oldP.ObjectMeta)
}

func (validatingPolicyStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validatePolicyStatus(&obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status, field.NewPath("status"))
}

type mutatingPolicyStrategy struct{ configStrategy }

// Default implements rest.Defaulter: failurePolicy Fail, and the
// defaults of match constraints.
func (mutatingPolicyStrategy) Default(obj runtime.Object) {
	spec := &obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec
	if spec.FailurePolicy == nil {
		spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(spec.MatchConstraints)
}

func (mutatingPolicyStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	setGeneration(obj, nil, true)
}

func (mutatingPolicyStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	setGeneration(obj, old, generic.SpecChanged(obj, old))
}

func (mutatingPolicyStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
	return append(validateMutatingPolicy(p, nil), validateStaticSuffix(obj)...)
}

func (mutatingPolicyStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateMutatingPolicy(obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy))
}

func (mutatingPolicyStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return staticSuffixWarnings(obj)
}
