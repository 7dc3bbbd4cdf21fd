package networking

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var ingressClasses = generic.Resource{
	Name: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass",
	New: generic.NewOf[networkingv1.IngressClass], NewList: generic.NewOf[networkingv1.IngressClassList],
	Strategy: ingressClassStrategy{},
	Table: generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
			{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			ic := obj.(*networkingv1.IngressClass)
			name := ic.Name
			if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
				name += " (default)"
			}
			parameters := "<none>"
			if p := ic.Spec.Parameters; p != nil {
				parameters = p.Kind
				if p.APIGroup != nil {
					parameters += "." + *p.APIGroup
				}
				parameters += "/" + p.Name
			}
			return []interface{}{name, ic.Spec.Controller, parameters, generic.TranslateTimestampSince(ic.CreationTimestamp)}, nil
		},
	},
}

// maxIngressClassControllerLen is kube's limit on spec.controller.
const maxIngressClassControllerLen = 250

type ingressClassStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = ingressClassStrategy{}

// Default implements rest.Defaulter: parameters are cluster-scoped unless
// they say otherwise.
func (ingressClassStrategy) Default(obj runtime.Object) {
	if p := obj.(*networkingv1.IngressClass).Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

func (ingressClassStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
}

func (ingressClassStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.BumpGenerationOnSpecChange(obj, old)
}

func (ingressClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ic := obj.(*networkingv1.IngressClass)
	return append(validateIngressClass(ic), declarativeIngressClass(ic, nil)...)
}

// ValidateUpdate: the controller never changes; the rest is validated as
// on create.
func (ingressClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ic, oldIC := obj.(*networkingv1.IngressClass), old.(*networkingv1.IngressClass)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&ic.ObjectMeta, &oldIC.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(ic.Spec.Controller, oldIC.Spec.Controller, field.NewPath("spec", "controller"))...)
	allErrs = append(allErrs, validateIngressClass(ic)...)
	return append(allErrs, declarativeIngressClass(ic, oldIC)...)
}

func validateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&ic.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	p := field.NewPath("spec")
	if len(ic.Spec.Controller) > maxIngressClassControllerLen {
		allErrs = append(allErrs, field.TooLong(p.Child("controller"), "", maxIngressClassControllerLen))
	}
	allErrs = append(allErrs, validation.IsDomainPrefixedPath(p.Child("controller"), ic.Spec.Controller)...)
	return append(allErrs, validateIngressClassParameters(ic.Spec.Parameters, p.Child("parameters"))...)
}

// validateIngressClassParameters checks the reference to the class's
// parameters, but for the required kind and name: the declarative rules
// (declarativeIngressClass) report those, after the others.
func validateIngressClassParameters(params *networkingv1.IngressClassParametersReference, fldPath *field.Path) field.ErrorList {
	if params == nil {
		return nil
	}
	var allErrs field.ErrorList
	if params.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*params.APIGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroup"), *params.APIGroup, msg))
		}
	}
	if params.Kind != "" {
		allErrs = append(allErrs, pathSegment(params.Kind, fldPath.Child("kind"))...)
	}
	if params.Name != "" {
		allErrs = append(allErrs, pathSegment(params.Name, fldPath.Child("name"))...)
	}
	if params.Scope == nil {
		return append(allErrs, field.Required(fldPath.Child("scope"), ""))
	}
	switch *params.Scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if params.Namespace == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			for _, msg := range apivalidation.ValidateNamespaceName(*params.Namespace, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), *params.Namespace, msg))
			}
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if params.Namespace != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), *params.Scope, []string{
			networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
	}
	return allErrs
}

// declarativeIngressClass is what kube 1.37 checks from the API types'
// declarative rules: the parameters' kind and name are required. As
// there, an update does not check again a value it leaves as it was.
func declarativeIngressClass(ic, old *networkingv1.IngressClass) field.ErrorList {
	params := ic.Spec.Parameters
	if params == nil {
		return nil
	}
	var oldParams *networkingv1.IngressClassParametersReference
	if old != nil {
		oldParams = old.Spec.Parameters
	}
	p := field.NewPath("spec", "parameters")
	var allErrs field.ErrorList
	if oldParams == nil || oldParams.Kind != params.Kind {
		allErrs = append(allErrs, requiredValue(params.Kind, p.Child("kind"))...)
	}
	if oldParams == nil || oldParams.Name != params.Name {
		allErrs = append(allErrs, requiredValue(params.Name, p.Child("name"))...)
	}
	return allErrs
}
