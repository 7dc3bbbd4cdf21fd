package networking

import (
	"context"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

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
	Table: generic.TablePrinter{
		// kube prints the age in a third cell, without a column for it.
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			ip := obj.(*networkingv1.IPAddress)
			parent := "<none>"
			if ref := ip.Spec.ParentRef; ref != nil {
				parent = strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
				if ref.Namespace != "" {
					parent += "/" + ref.Namespace
				}
				parent += "/" + ref.Name
			}
			return []interface{}{ip.Name, parent, generic.TranslateTimestampSince(ip.CreationTimestamp)}, nil
		},
	},
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
