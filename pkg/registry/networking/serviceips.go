package networking

import (
	"context"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// ipAddresses serves the IPAddress objects, among them those the
// services' cluster IP allocator (core/service/ipallocator) writes at the
// same keys: one truth, which a user may add to (an address reserved by
// hand is taken for services) or delete from.
var ipAddresses = generic.Resource{
	Name: "ipaddresses", Singular: "ipaddress", Kind: "IPAddress",
	ShortNames: []string{"ip"},
	New:        generic.NewOf[networkingv1.IPAddress], NewList: generic.NewOf[networkingv1.IPAddressList],
	Strategy: ipAddressStrategy{},
	// An IPAddress is named by its address: generateName is the name.
	NameGenerator: func(base string) string { return base },
	// kube prints the age in a third cell, without a column for it.
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
	}, func(ip *networkingv1.IPAddress) ([]interface{}, error) {
		parent := "<none>"
		if ref := ip.Spec.ParentRef; ref != nil {
			parent = strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
			if ref.Namespace != "" {
				parent += "/" + ref.Namespace
			}
			parent += "/" + ref.Name
		}
		return []interface{}{ip.Name, parent, generic.TranslateTimestampSince(ip.CreationTimestamp)}, nil
	}),
}

type ipAddressStrategy struct{ generic.BaseStrategy }

func (ipAddressStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ip := obj.(*networkingv1.IPAddress)
	return append(validateIPAddress(ip), declarativeIPAddress(ip, nil)...)
}

// ValidateUpdate: the parent reference never changes.
func (ipAddressStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ip, oldIP := obj.(*networkingv1.IPAddress), old.(*networkingv1.IPAddress)
	allErrs := validateIPAddress(ip)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&ip.ObjectMeta, &oldIP.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, declarativeIPAddress(ip, oldIP)...)
}

// validateIPAddressName: the name is an IP address, in canonical form.
func validateIPAddressName(name string, _ bool) []string {
	var msgs []string
	for _, err := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}

// validateIPAddress checks the name and the parent reference's values;
// that it has one, with a resource and a name, are declarative rules.
func validateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&ip.ObjectMeta, false, validateIPAddressName, field.NewPath("metadata"))
	ref := ip.Spec.ParentRef
	if ref == nil {
		return allErrs
	}
	p := field.NewPath("spec", "parentRef")
	// The core group (services) is "": group cannot be required.
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			allErrs = append(allErrs, field.Invalid(p.Child("group"), ref.Group, msg))
		}
	}
	for _, v := range []struct{ name, value string }{{"resource", ref.Resource}, {"name", ref.Name}, {"namespace", ref.Namespace}} {
		if v.value != "" {
			allErrs = append(allErrs, pathSegment(v.value, p.Child(v.name))...)
		}
	}
	return allErrs
}

// declarativeIPAddress is kube 1.37's declarative rules: the parent
// reference is required and immutable, and names a resource and a name.
func declarativeIPAddress(ip, old *networkingv1.IPAddress) field.ErrorList {
	ref := ip.Spec.ParentRef
	var oldRef *networkingv1.ParentReference
	if old != nil {
		if oldRef = old.Spec.ParentRef; apiequality.Semantic.DeepEqual(ref, oldRef) {
			return nil
		}
	}
	p := field.NewPath("spec", "parentRef")
	var allErrs field.ErrorList
	if ref == nil {
		allErrs = append(allErrs, field.Required(p, ""))
	}
	if old != nil {
		allErrs = append(allErrs, field.Invalid(p, nil, "field is immutable"))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	return append(requiredValue(ref.Resource, p.Child("resource")), requiredValue(ref.Name, p.Child("name"))...)
}
