package admissionregistration

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// webhook is what validation reads of a validating or a mutating
// webhook (reinvocationPolicy is the mutating one's alone).
type webhook struct {
	name                    string
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	reinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
	clientConfig            admissionregistrationv1.WebhookClientConfig
	matchConditions         []admissionregistrationv1.MatchCondition
	admissionReviewVersions []string
}

func validatingWebhooks(in []admissionregistrationv1.ValidatingWebhook) []webhook {
	out := make([]webhook, len(in))
	for i, w := range in {
		out[i] = webhook{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds, w.NamespaceSelector,
			w.ObjectSelector, nil, w.ClientConfig, w.MatchConditions, w.AdmissionReviewVersions}
	}
	return out
}

func mutatingWebhooks(in []admissionregistrationv1.MutatingWebhook) []webhook {
	out := make([]webhook, len(in))
	for i, w := range in {
		out[i] = webhook{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds, w.NamespaceSelector,
			w.ObjectSelector, w.ReinvocationPolicy, w.ClientConfig, w.MatchConditions, w.AdmissionReviewVersions}
	}
	return out
}

// webhookOptions are kube's relaxations for an update of a
// configuration whose stored webhooks break today's rules already.
type webhookOptions struct {
	ignoreMatchConditions                   bool // unchanged: not compiled again
	requireNoSideEffects                    bool
	requireRecognizedAdmissionReviewVersion bool
	requireUniqueWebhookNames               bool
	allowInvalidLabelValueInSelector        bool
	storedExpressions                       sets.Set[string] // compiled in the stored-expressions environment
}

func strictWebhookOptions() webhookOptions {
	return webhookOptions{requireNoSideEffects: true, requireRecognizedAdmissionReviewVersion: true, requireUniqueWebhookNames: true}
}

func webhookUpdateOptions(hooks, old []webhook) webhookOptions {
	opts := webhookOptions{
		ignoreMatchConditions:                   sameMatchConditions(hooks, old),
		requireNoSideEffects:                    true,
		requireRecognizedAdmissionReviewVersion: true,
		requireUniqueWebhookNames:               true,
		storedExpressions:                       sets.New[string](),
	}
	names := sets.New[string]()
	for _, h := range old {
		opts.requireNoSideEffects = opts.requireNoSideEffects && h.sideEffects != nil && noSideEffectClasses.Has(string(*h.sideEffects))
		if len(h.admissionReviewVersions) > 0 && !slices.ContainsFunc(h.admissionReviewVersions, isAcceptedReviewVersion) {
			opts.requireRecognizedAdmissionReviewVersion = false
		}
		opts.requireUniqueWebhookNames = opts.requireUniqueWebhookNames && !names.Has(h.name)
		names.Insert(h.name)
		for _, sel := range []*metav1.LabelSelector{h.namespaceSelector, h.objectSelector} {
			if sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				opts.allowInvalidLabelValueInSelector = true
			}
		}
		for _, mc := range h.matchConditions {
			opts.storedExpressions.Insert(mc.Expression)
		}
	}
	return opts
}

func sameMatchConditions(hooks, old []webhook) bool {
	if len(hooks) != len(old) {
		return false
	}
	for i := range old {
		if !slices.Equal(hooks[i].matchConditions, old[i].matchConditions) {
			return false
		}
	}
	return true
}

var (
	supportedFailurePolicies      = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	supportedMatchPolicies        = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	supportedReinvocationPolicies = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	supportedSideEffectClasses    = sets.New(string(admissionregistrationv1.SideEffectClassUnknown), string(admissionregistrationv1.SideEffectClassNone),
		string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	noSideEffectClasses = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	// acceptedReviewVersions are the AdmissionReview versions the server
	// sends (the previous release's, as kube checks).
	acceptedReviewVersions = []string{"v1", "v1beta1"}
)

func isAcceptedReviewVersion(v string) bool { return slices.Contains(acceptedReviewVersions, v) }

func validateWebhookConfiguration(m *metav1.ObjectMeta, hooks []webhook, opts webhookOptions) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(m, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	names := sets.New[string]()
	for i := range hooks {
		p := field.NewPath("webhooks").Index(i)
		allErrs = append(allErrs, validateWebhook(&hooks[i], opts, p)...)
		allErrs = append(allErrs, validateReviewVersions(hooks[i].admissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, p.Child("admissionReviewVersions"))...)
		if name := hooks[i].name; opts.requireUniqueWebhookNames && name != "" {
			if names.Has(name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), name))
			}
			names.Insert(name)
		}
	}
	return allErrs
}

func validateWebhook(h *webhook, opts webhookOptions, fldPath *field.Path) field.ErrorList {
	allErrs := validation.IsFullyQualifiedName(fldPath.Child("name"), h.name)
	for i := range h.rules {
		allErrs = append(allErrs, validateRuleWithOperations(&h.rules[i], fldPath.Child("rules").Index(i))...)
	}
	allErrs = append(allErrs, validateEnum(h.failurePolicy, supportedFailurePolicies, fldPath.Child("failurePolicy"))...)
	allErrs = append(allErrs, validateEnum(h.matchPolicy, supportedMatchPolicies, fldPath.Child("matchPolicy"))...)
	allowedSideEffects := supportedSideEffectClasses
	if opts.requireNoSideEffects {
		allowedSideEffects = noSideEffectClasses
	}
	if h.sideEffects == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(allowedSideEffects), ", "))))
	}
	allErrs = append(allErrs, validateEnum(h.sideEffects, allowedSideEffects, fldPath.Child("sideEffects"))...)
	if t := h.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector}
	if h.namespaceSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(h.namespaceSelector, selectorOpts, fldPath.Child("namespaceSelector"))...)
	}
	if h.objectSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(h.objectSelector, selectorOpts, fldPath.Child("objectSelector"))...)
	}
	allErrs = append(allErrs, validateEnum(h.reinvocationPolicy, supportedReinvocationPolicies, fldPath.Child("reinvocationPolicy"))...)
	allErrs = append(allErrs, validateClientConfig(&h.clientConfig, fldPath.Child("clientConfig"))...)
	if !opts.ignoreMatchConditions {
		allErrs = append(allErrs, validateMatchConditions(h.matchConditions, opts.storedExpressions, false, fldPath.Child("matchConditions"))...)
	}
	return allErrs
}

// validateEnum refuses a set value outside supported (listed sorted).
func validateEnum[T ~string](v *T, supported sets.Set[string], fldPath *field.Path) field.ErrorList {
	if v == nil || supported.Has(string(*v)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, *v, sets.List(supported))}
}

func validateReviewVersions(versions []string, requireRecognized bool, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must specify one of %v", strings.Join(acceptedReviewVersions, ", ")))}
	}
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, v := range versions {
		if seen.Has(v) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range validation.IsDNS1035Label(v) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), v, msg))
		}
	}
	if requireRecognized && !slices.ContainsFunc(versions, isAcceptedReviewVersion) {
		allErrs = append(allErrs, field.Invalid(fldPath, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedReviewVersions, ", "))))
	}
	return allErrs
}

// validateClientConfig: exactly one of an https URL and a service.
func validateClientConfig(cc *admissionregistrationv1.WebhookClientConfig, fldPath *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(fldPath, "exactly one of url or service is required")}
	case cc.URL != nil:
		return validateWebhookURL(*cc.URL, fldPath.Child("url"))
	}
	return validateWebhookService(cc.Service, fldPath.Child("service"))
}

func validateWebhookURL(raw string, fldPath *field.Path) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(fldPath, "url must be a valid URL: "+err.Error()+form)}
	}
	var allErrs field.ErrorList
	if u.Scheme != "https" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return allErrs
}

func validateWebhookService(s *admissionregistrationv1.ServiceReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	if s.Namespace == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
	}
	port := int32(443) // defaulted
	if s.Port != nil {
		port = *s.Port
	}
	if errs := validation.IsValidPortNum(int(port)); errs != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port, "port is not valid: "+strings.Join(errs, ", ")))
	}
	if s.Path == nil {
		return allErrs
	}
	return append(allErrs, validateServicePath(*s.Path, fldPath.Child("path"))...)
}

// validateServicePath: "/" or "/"-separated DNS subdomains.
func validateServicePath(p string, fldPath *field.Path) field.ErrorList {
	switch p {
	case "", "/":
		return nil
	case "//":
		return field.ErrorList{field.Invalid(fldPath, p, "segment[0] may not be empty")}
	}
	var allErrs field.ErrorList
	if !strings.HasPrefix(p, "/") {
		allErrs = append(allErrs, field.Invalid(fldPath, p, "must start with a '/'"))
	}
	for i, step := range strings.Split(strings.TrimSuffix(p[1:], "/"), "/") {
		if step == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, p, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(step) {
			allErrs = append(allErrs, field.Invalid(fldPath, p, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return allErrs
}

// excludedResources are the virtual resources admission webhooks never
// see (kube v1.37's exclusion list).
var excludedResources = sets.New(
	"authentication.k8s.io/selfsubjectreviews", "authentication.k8s.io/tokenreviews",
	"authorization.k8s.io/localsubjectaccessreviews", "authorization.k8s.io/selfsubjectaccessreviews",
	"authorization.k8s.io/selfsubjectrulesreviews", "authorization.k8s.io/subjectaccessreviews",
)

// excludedRuleWarnings warns about rules naming an excluded resource
// outright (a wildcard's intent is left alone), once per resource.
func excludedRuleWarnings(hooks []webhook) []string {
	var warnings []string
	for i, h := range hooks {
		rules := field.NewPath("webhooks").Index(i).Child("rules")
		for j, r := range h.rules {
			if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") {
				continue
			}
			seen := sets.New[string]()
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					gr := g + "/" + res
					if excludedResources.Has(gr) && !seen.Has(gr) {
						seen.Insert(gr)
						warnings = append(warnings, fmt.Sprintf("%s: %s.%s is excluded from admission webhooks; this rule will have no effect", rules.Index(j), res, g))
					}
				}
			}
		}
	}
	return warnings
}
