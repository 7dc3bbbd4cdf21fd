package networking

import (
	"context"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// serviceCIDRs serves the ranges services' cluster IPs come from: the
// default one, "kubernetes", made from --service-cluster-ip-range (see
// DefaultServiceCIDR), and any a user adds, which the allocator
// (core/service/ipallocator) hands addresses out of too.
var serviceCIDRs = generic.Resource{
	Name: "servicecidrs", Singular: "servicecidr", Kind: "ServiceCIDR",
	New: generic.NewOf[networkingv1.ServiceCIDR], NewList: generic.NewOf[networkingv1.ServiceCIDRList],
	Strategy:       serviceCIDRStrategy{},
	StatusStrategy: serviceCIDRStatus,
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
		func(sc *networkingv1.ServiceCIDR) interface{} { return strings.Join(sc.Spec.CIDRs, ",") }),
}

// serviceCIDRStrategy: a ServiceCIDR's ranges never change, but a
// single-stack one may gain a range of the other family. Status is
// written through /status only (kube 1.37's ServiceCIDRStatusFieldWiping).
type serviceCIDRStrategy struct{ generic.SpecStrategy }

// GetResetFields implements rest.ResetFieldsStrategy: the main resource does not change status.
func (serviceCIDRStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("networking.k8s.io/v1", "status")
}

func (serviceCIDRStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	sc := obj.(*networkingv1.ServiceCIDR)
	allErrs := corevalidation.ValidateObjectMeta(&sc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateServiceCIDRSpec(&sc.Spec, field.NewPath("spec", "cidrs"))...)
}

func (serviceCIDRStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	sc, oldSC := obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &oldSC.ObjectMeta, field.NewPath("metadata"))
	cidrs, oldCIDRs := sc.Spec.CIDRs, oldSC.Spec.CIDRs
	p := field.NewPath("spec", "cidrs")
	switch {
	case len(cidrs) == len(oldCIDRs):
		for i := range oldCIDRs {
			if cidrs[i] != oldCIDRs[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(i), cidrs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
	case len(oldCIDRs) == 1 && len(cidrs) == 2:
		// Single-stack to dual-stack: the first range stays.
		if cidrs[0] != oldCIDRs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), cidrs[0], apivalidation.FieldImmutableErrorMsg))
		}
		allErrs = append(allErrs, validateServiceCIDRSpec(&sc.Spec, p)...)
	default:
		allErrs = append(allErrs, field.Invalid(p, cidrs, apivalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

// validateServiceCIDRSpec: one or two ranges, of different families.
func validateServiceCIDRSpec(spec *networkingv1.ServiceCIDRSpec, fldPath *field.Path) field.ErrorList {
	switch {
	case len(spec.CIDRs) == 0:
		return field.ErrorList{field.Required(fldPath, "at least one CIDR required")}
	case len(spec.CIDRs) > 2:
		return field.ErrorList{field.Invalid(fldPath, corevalidation.InternalValue(spec), "may only hold up to 2 values")}
	}
	var allErrs field.ErrorList
	for i, cidr := range spec.CIDRs {
		allErrs = append(allErrs, validation.IsValidCIDR(fldPath.Index(i), cidr)...)
	}
	if len(spec.CIDRs) == 2 {
		family := netutils.IPFamilyOfCIDRString(spec.CIDRs[0])
		if family != netutils.IPFamilyUnknown && family == netutils.IPFamilyOfCIDRString(spec.CIDRs[1]) {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.CIDRs,
				"may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return allErrs
}

// serviceCIDRStatus serves servicecidrs/status: only status changes, and
// metadata that /status may not change (labels, annotations, finalizers,
// owners) stays.
var serviceCIDRStatus = generic.StatusStrategy{Main: serviceCIDRStrategy{}, GroupVersion: "networking.k8s.io/v1",
	KeepMetadata: true, Validate: validateServiceCIDRStatusUpdate}

// validateServiceCIDRStatusUpdate checks metadata only: kube does not
// validate the conditions of a ServiceCIDR.
func validateServiceCIDRStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	sc, oldSC := obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR)
	return corevalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &oldSC.ObjectMeta, field.NewPath("metadata"))
}
