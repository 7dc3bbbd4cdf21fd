package flowcontrol

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The rules below are kube's pkg/apis/flowcontrol/validation, on the v1
// types, with its messages.

const maxMatchingPrecedence = 10000

var (
	supportedDistinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	supportedVerbs                = sets.New("get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy")
	supportedSubjectKinds         = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
)

// mandatoryFlowSchemas and mandatoryPriorityLevels are kube's mandatory
// objects, by name: their specs may not change (but for the exempt
// level's exempt settings).
var (
	mandatoryFlowSchemas    = map[string]*flowcontrolv1.FlowSchema{}
	mandatoryPriorityLevels = map[string]*flowcontrolv1.PriorityLevelConfiguration{}
)

func init() {
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		mandatoryFlowSchemas[fs.Name] = fs
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		mandatoryPriorityLevels[pl.Name] = pl
	}
}

func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&fs.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateFlowSchemaSpec(fs.Name, &fs.Spec, spec)...)
	if mand, ok := mandatoryFlowSchemas[fs.Name]; ok && !apiequality.Semantic.DeepEqual(fs.Spec, mand.Spec) {
		allErrs = append(allErrs, field.Invalid(spec, corevalidation.InternalValue(fs.Spec), fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return append(allErrs, validateFlowSchemaStatus(&fs.Status, field.NewPath("status"))...)
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	precedence := fldPath.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		allErrs = append(allErrs, field.Invalid(precedence, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > maxMatchingPrecedence {
		allErrs = append(allErrs, field.Invalid(precedence, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", maxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		allErrs = append(allErrs, field.Invalid(precedence, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if m := spec.DistinguisherMethod; m != nil && !slices.Contains(supportedDistinguisherMethods, string(m.Type)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("distinguisherMethod", "type"), corevalidation.InternalValue(m), supportedDistinguisherMethods))
	}
	plName := fldPath.Child("priorityLevelConfiguration", "name")
	if name := spec.PriorityLevelConfiguration.Name; name == "" {
		allErrs = append(allErrs, field.Required(plName, "must reference a priority level"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
			allErrs = append(allErrs, field.Invalid(plName, name, msg))
		}
	}
	for i := range spec.Rules {
		allErrs = append(allErrs, validatePolicyRulesWithSubjects(&spec.Rules[i], fldPath.Child("rules").Index(i))...)
	}
	return allErrs
}

func validatePolicyRulesWithSubjects(rule *flowcontrolv1.PolicyRulesWithSubjects, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Subjects) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		allErrs = append(allErrs, validateSubject(&rule.Subjects[i], fldPath.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		allErrs = append(allErrs, validateResourceRule(&rule.ResourceRules[i], fldPath.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		allErrs = append(allErrs, validateNonResourceRule(&rule.NonResourceRules[i], fldPath.Child("nonResourceRules").Index(i))...)
	}
	return allErrs
}

// validateSubject: the member its kind names is set and valid, the
// others are not set.
func validateSubject(s *flowcontrolv1.Subject, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		allErrs = append(allErrs, validateServiceAccountSubject(s.ServiceAccount, fldPath.Child("serviceAccount"))...)
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("user", "name"), ""))
		}
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("group", "name"), ""))
		}
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("kind"), s.Kind, supportedSubjectKinds)}
	}
	// In kube's order: serviceAccount, then user, then group, each
	// refused unless it is the subject's kind.
	if s.Kind != flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
	}
	if s.Kind != flowcontrolv1.SubjectKindUser && s.User != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("user"), "user is forbidden when subject kind is not 'User'"))
	}
	if s.Kind != flowcontrolv1.SubjectKindGroup && s.Group != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("group"), "group is forbidden when subject kind is not 'Group'"))
	}
	return allErrs
}

func validateServiceAccountSubject(s *flowcontrolv1.ServiceAccountSubject, fldPath *field.Path) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(fldPath, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var allErrs field.ErrorList
	if s.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if s.Name != flowcontrolv1.NameAll {
		for _, msg := range apivalidation.ValidateServiceAccountName(s.Name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), s.Name, msg))
		}
	}
	if s.Namespace == "" {
		return append(allErrs, field.Required(fldPath.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apivalidation.ValidateNamespaceName(s.Namespace, false) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), s.Namespace, msg))
	}
	return allErrs
}

// validateVerbs: at least one, "*" alone, or kube's verbs.
func validateVerbs(verbs []string, fldPath *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(fldPath, "verbs must contain at least one value")}
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(fldPath, verbs, "if '*' is present, must not specify other verbs")}
		}
	case !supportedVerbs.HasAll(verbs...):
		return field.ErrorList{field.NotSupported(fldPath, verbs, sets.List(supportedVerbs))}
	}
	return nil
}

func validateResourceRule(rule *flowcontrolv1.ResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(rule.Verbs, fldPath.Child("verbs"))
	allErrs = append(allErrs, validateMatchList(rule.APIGroups, "api group", fldPath.Child("apiGroups"))...)
	allErrs = append(allErrs, validateMatchList(rule.Resources, "resource", fldPath.Child("resources"))...)
	namespaces := fldPath.Child("namespaces")
	switch {
	case len(rule.Namespaces) == 0 && !rule.ClusterScope:
		allErrs = append(allErrs, field.Required(namespaces, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(rule.Namespaces, "*"):
		if len(rule.Namespaces) > 1 {
			allErrs = append(allErrs, field.Invalid(namespaces, rule.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range rule.Namespaces {
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				allErrs = append(allErrs, field.Invalid(namespaces.Index(i), ns, "each member of this list must be '*' or a DNS-1123 label; "+msg))
			}
		}
	}
	return allErrs
}

// validateMatchList: at least one what, "*" alone.
func validateMatchList(list []string, what string, fldPath *field.Path) field.ErrorList {
	if len(list) == 0 {
		return field.ErrorList{field.Required(fldPath, "resource rules must supply at least one "+what)}
	}
	if len(list) > 1 && slices.Contains(list, "*") {
		return field.ErrorList{field.Invalid(fldPath, list, "if '*' is present, must not specify other "+what+"s")}
	}
	return nil
}

func validateNonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(rule.Verbs, fldPath.Child("verbs"))
	urls := fldPath.Child("nonResourceURLs")
	switch {
	case len(rule.NonResourceURLs) == 0:
		allErrs = append(allErrs, field.Required(urls, "nonResourceURLs must contain at least one value"))
	case slices.Contains(rule.NonResourceURLs, "*"):
		if len(rule.NonResourceURLs) > 1 {
			allErrs = append(allErrs, field.Invalid(urls, rule.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range rule.NonResourceURLs {
			if msg := checkNonResourceURL(u); msg != "" {
				allErrs = append(allErrs, field.Invalid(urls.Index(i), u, msg))
			}
		}
	}
	return allErrs
}

// checkNonResourceURL: "/" or an absolute path without spaces or "//",
// where "*" may only end it, as "/*" (matching any suffix).
func checkNonResourceURL(p string) string {
	switch {
	case p == "":
		return "must not be empty"
	case p == "/":
		return ""
	case !strings.HasPrefix(p, "/"):
		return "must start with slash"
	case strings.Contains(p, " "):
		return "must not contain white-space"
	case strings.Contains(p, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(p, "*"); n > 1 || (n == 1 && !strings.HasSuffix(p, "/*")) {
		return "wildcard can only do suffix matching"
	}
	return ""
}

func validateFlowSchemaStatus(status *flowcontrolv1.FlowSchemaStatus, fldPath *field.Path) field.ErrorList {
	types := make([]string, len(status.Conditions))
	for i, c := range status.Conditions {
		types[i] = string(c.Type)
	}
	return validateConditionTypes(types, fldPath.Child("conditions"))
}

// validateConditionTypes: every condition has a type, no type twice.
func validateConditionTypes(types []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, t := range types {
		if seen.Has(t) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i).Child("type"), t))
		}
		seen.Insert(t)
		if t == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i).Child("type"), ""))
		}
	}
	return allErrs
}
