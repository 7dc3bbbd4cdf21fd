package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of kube's pkg/apis/admissionregistration/validation that
// webhooks, policies and bindings share, with kube's messages.

var (
	supportedScopes     = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope), string(admissionregistrationv1.AllScopes))
	supportedOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
)

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	ops := fldPath.Child("operations")
	if len(r.Operations) == 0 {
		allErrs = append(allErrs, field.Required(ops, ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		allErrs = append(allErrs, field.Invalid(ops, r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !supportedOperations.Has(string(op)) {
			allErrs = append(allErrs, field.NotSupported(ops.Index(i), op, sets.List(supportedOperations)))
		}
	}
	return append(allErrs, validateRule(&r.Rule, fldPath)...)
}

func validateRule(r *admissionregistrationv1.Rule, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	groups, versions := fldPath.Child("apiGroups"), fldPath.Child("apiVersions")
	if len(r.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(groups, ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		allErrs = append(allErrs, field.Invalid(groups, r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// A group may be empty (the core group); a version may not.
	if len(r.APIVersions) == 0 {
		allErrs = append(allErrs, field.Required(versions, ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		allErrs = append(allErrs, field.Invalid(versions, r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			allErrs = append(allErrs, field.Required(versions.Index(i), ""))
		}
	}
	allErrs = append(allErrs, validateResources(r.Resources, fldPath.Child("resources"))...)
	if r.Scope != nil && !supportedScopes.Has(string(*r.Scope)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), *r.Scope, sets.List(supportedScopes)))
	}
	return allErrs
}

// validateResources checks "resource", "resource/subresource" and their
// wildcards: "*/*" alone; "*" with subresources only; no "x/y" beside
// "x/*" or "*/y".
func validateResources(resources []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	withAnySubresource, withAnyResource := sets.New[string](), sets.New[string]()
	var doubleWildcard, singleWildcard, plainResource bool
	for i, rs := range resources {
		if rs == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
			continue
		}
		doubleWildcard = doubleWildcard || rs == "*/*"
		singleWildcard = singleWildcard || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			// sic: kube keeps whether the last one was a resource.
			plainResource = rs != "*"
			continue
		}
		if withAnySubresource.Has(res) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if withAnyResource.Has(sub) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			withAnySubresource.Insert(res)
		}
		if res == "*" {
			withAnyResource.Insert(sub)
		}
	}
	if len(resources) > 1 && doubleWildcard {
		allErrs = append(allErrs, field.Invalid(fldPath, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWildcard && plainResource {
		allErrs = append(allErrs, field.Invalid(fldPath, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return allErrs
}

// validateMatchResources checks a policy's or binding's matchConstraints
// (or matchResources): a policy, selectors (validated strictly, the type
// being newer than the lax label values of webhooks), named rules.
func validateMatchResources(mc *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	if mc == nil {
		return nil
	}
	var allErrs field.ErrorList
	if mc.MatchPolicy == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("matchPolicy"), ""))
	} else {
		allErrs = append(allErrs, validateEnum(mc.MatchPolicy, supportedMatchPolicies, fldPath.Child("matchPolicy"))...)
	}
	for _, sel := range []struct {
		name     string
		selector *metav1.LabelSelector
	}{{"namespaceSelector", mc.NamespaceSelector}, {"objectSelector", mc.ObjectSelector}} {
		if sel.selector == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child(sel.name), ""))
			continue
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(sel.selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child(sel.name))...)
	}
	for i := range mc.ResourceRules {
		allErrs = append(allErrs, validateNamedRule(&mc.ResourceRules[i], fldPath.Child("resourceRules").Index(i))...)
	}
	for i := range mc.ExcludeResourceRules {
		allErrs = append(allErrs, validateNamedRule(&mc.ExcludeResourceRules[i], fldPath.Child("excludeResourceRules").Index(i))...)
	}
	return allErrs
}

func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, name := range r.ResourceNames {
		p := fldPath.Child("resourceNames").Index(i)
		for _, msg := range content.IsPathSegmentName(name) {
			allErrs = append(allErrs, field.Invalid(p, name, msg))
		}
		if seen.Has(name) {
			allErrs = append(allErrs, field.Duplicate(p, name))
		}
		seen.Insert(name)
	}
	return append(allErrs, validateRuleWithOperations(&r.RuleWithOperations, fldPath)...)
}

// validateParamKind: an apiVersion of a DNS subdomain group and a DNS
// label version, a kind that is a DNS label but for its case.
func validateParamKind(pk *admissionregistrationv1.ParamKind, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	apiVersion := fldPath.Child("apiVersion")
	if pk.APIVersion == "" {
		allErrs = append(allErrs, field.Required(apiVersion, ""))
	} else if group, version, err := splitGroupVersion(pk.APIVersion); err != nil {
		allErrs = append(allErrs, field.Invalid(apiVersion, pk.APIVersion, err.Error()))
	} else {
		if group != "" {
			if errs := validation.IsDNS1123Subdomain(group); len(errs) > 0 {
				allErrs = append(allErrs, field.Invalid(apiVersion, group, strings.Join(errs, ",")))
			}
		}
		if version == "" {
			allErrs = append(allErrs, field.Invalid(apiVersion, pk.APIVersion, "version must be specified"))
		} else if errs := validation.IsDNS1035Label(version); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(apiVersion, version, strings.Join(errs, ",")))
		}
	}
	if pk.Kind == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("kind"), ""))
	} else if errs := validation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(errs) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")))
	}
	return allErrs
}

// splitGroupVersion splits "group/version" (or "version", or "/").
func splitGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	}
	return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
}

// validateParamRef: a name or a selector, not both, and what to do when
// no parameter is found.
func validateParamRef(pr *admissionregistrationv1.ParamRef, fldPath *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var allErrs field.ErrorList
	const exclusive = "name and selector are mutually exclusive"
	if pr.Name != "" {
		for _, msg := range content.IsPathSegmentName(pr.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("name"), exclusive))
		}
	}
	if pr.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
		if pr.Name != "" {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("selector"), exclusive))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		allErrs = append(allErrs, field.Required(fldPath, "one of name or selector must be specified"))
	}
	action := fldPath.Child("parameterNotFoundAction")
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		allErrs = append(allErrs, field.Required(action, ""))
	case *a != admissionregistrationv1.DenyAction && *a != admissionregistrationv1.AllowAction:
		allErrs = append(allErrs, field.NotSupported(action, a, []string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return allErrs
}
