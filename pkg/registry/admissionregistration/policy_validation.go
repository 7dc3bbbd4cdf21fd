package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"

	celgo "github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/client-go/util/jsonpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

const (
	maxAuditAnnotations = 20
	// maxAuditAnnotationValueExpressionLength is kube's 5 KiB: less than
	// the value's own limit, since expressions build longer strings.
	maxAuditAnnotationValueExpressionLength = 5 * 1024
)

var (
	supportedReasons = sets.New(string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge))
	// mutatingOperations: a mutating policy cannot act on deletes.
	mutatingOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Connect))
	newlines = regexp.MustCompile(`[\n\r]+`)
)

// policyOptions are what an update changes in a policy's validation:
// unchanged match conditions (and param kind) are not compiled again,
// and the stored expressions compile in the stored environment.
type policyOptions struct {
	ignoreMatchConditions bool
	stored                storedExpressions
}

func validateValidatingPolicy(p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	var opts policyOptions
	if old != nil {
		opts.ignoreMatchConditions = apiequality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) && apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
		opts.stored = storedOf(old.Spec.MatchConditions, old.Spec.Validations, old.Spec.AuditAnnotations, nil)
	}
	allErrs := corevalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateValidatingPolicySpec(&p.ObjectMeta, &p.Spec, opts, field.NewPath("spec"))...)
}

func validateValidatingPolicySpec(m *metav1.ObjectMeta, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, opts policyOptions, fldPath *field.Path) field.ErrorList {
	// Variables compose: each expression after them may use them.
	compiler := newCompiler(len(spec.Variables) > 0)
	allErrs := validatePolicyCommon(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, spec.MatchConditions, spec.Variables, compiler, opts, fldPath)
	params := spec.ParamKind != nil
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(allErrs, field.Required(fldPath.Child("validations"), msg), field.Required(fldPath.Child("auditAnnotations"), msg))
	}
	for i := range spec.Validations {
		allErrs = append(allErrs, validateValidation(compiler, &spec.Validations[i], params, opts.stored, fldPath.Child("validations").Index(i))...)
	}
	if spec.AuditAnnotations == nil {
		return allErrs
	}
	annotations := fldPath.Child("auditAnnotations")
	if len(spec.AuditAnnotations) > maxAuditAnnotations {
		allErrs = append(allErrs, field.Invalid(annotations, spec.AuditAnnotations, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := sets.New[string]()
	for i := range spec.AuditAnnotations {
		a := &spec.AuditAnnotations[i]
		allErrs = append(allErrs, validateAuditAnnotation(compiler, m.Name, a, params, opts.stored, annotations.Index(i))...)
		if keys.Has(a.Key) {
			allErrs = append(allErrs, field.Duplicate(annotations.Index(i).Child("key"), a.Key))
		}
		keys.Insert(a.Key)
	}
	return allErrs
}

// validatePolicyCommon checks what validating and mutating policies
// share: failure policy, param kind, match constraints (with at least one
// resource rule, which gives the expressions their types), match
// conditions and variables.
func validatePolicyCommon(failurePolicy *admissionregistrationv1.FailurePolicyType, paramKind *admissionregistrationv1.ParamKind,
	mc *admissionregistrationv1.MatchResources, conditions []admissionregistrationv1.MatchCondition, variables []admissionregistrationv1.Variable,
	compiler plugincel.Compiler, opts policyOptions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if failurePolicy == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("failurePolicy"), ""))
	} else {
		allErrs = append(allErrs, validateEnum(failurePolicy, supportedFailurePolicies, fldPath.Child("failurePolicy"))...)
	}
	if paramKind != nil {
		allErrs = append(allErrs, validateParamKind(paramKind, fldPath.Child("paramKind"))...)
	}
	if mc == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("matchConstraints"), ""))
	} else {
		allErrs = append(allErrs, validateMatchResources(mc, fldPath.Child("matchConstraints"))...)
		if len(mc.ResourceRules) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	if !opts.ignoreMatchConditions {
		allErrs = append(allErrs, validateMatchConditions(conditions, opts.stored.matchConditions, paramKind != nil, fldPath.Child("matchConditions"))...)
	}
	for i := range variables {
		allErrs = append(allErrs, validateVariable(compiler, &variables[i], paramKind != nil, opts.stored, fldPath.Child("variables").Index(i))...)
	}
	return allErrs
}

func validateVariable(compiler plugincel.Compiler, v *admissionregistrationv1.Variable, params bool, stored storedExpressions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if strings.TrimSpace(v.Name) == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "name is not specified"))
	} else if !isCELIdentifier(v.Name) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(v.Expression) == "" {
		return append(allErrs, field.Required(fldPath.Child("expression"), "expression is not specified"))
	}
	if _, ok := compiler.(*plugincel.CompositedCompiler); !ok {
		return append(allErrs, field.InternalError(fldPath, fmt.Errorf("variable composition is not allowed")))
	}
	// sic: kube looks variables up among the stored validations.
	e := expression{name: v.Name, text: v.Expression, returns: variableResult}
	return append(allErrs, compileErrors(compiler, e, plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true},
		stored.validations.Has(v.Expression), v.Expression, fldPath.Child("expression"))...)
}

func validateValidation(compiler plugincel.Compiler, v *admissionregistrationv1.Validation, params bool, stored storedExpressions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("expression"), "expression is not specified"))
	} else {
		e := expression{text: v.Expression, returns: boolResult}
		allErrs = append(allErrs, compileErrors(compiler, e, plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true},
			stored.validations.Has(v.Expression), v.Expression, fldPath.Child("expression"))...)
	}
	switch trimmed := strings.TrimSpace(v.MessageExpression); {
	case v.MessageExpression != "" && trimmed == "":
		allErrs = append(allErrs, field.Invalid(fldPath.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	case trimmed != "":
		// The untrimmed expression, so that errors point at the right
		// column; no authorizer in messages.
		e := expression{text: v.MessageExpression, returns: stringResult}
		allErrs = append(allErrs, compileErrors(compiler, e, plugincel.OptionalVariableDeclarations{HasParams: params},
			stored.messages.Has(v.MessageExpression), v.MessageExpression, fldPath.Child("messageExpression"))...)
	}
	switch trimmed := strings.TrimSpace(v.Message); {
	case v.Message != "" && trimmed == "":
		allErrs = append(allErrs, field.Invalid(fldPath.Child("message"), v.Message, "must be non-empty if specified"))
	case newlines.MatchString(trimmed):
		allErrs = append(allErrs, field.Invalid(fldPath.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil {
		allErrs = append(allErrs, validateEnum(v.Reason, supportedReasons, fldPath.Child("reason"))...)
	}
	return allErrs
}

func validateAuditAnnotation(compiler plugincel.Compiler, policyName string, a *admissionregistrationv1.AuditAnnotation, params bool, stored storedExpressions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if policyName != "" {
		allErrs = append(allErrs, validateQualifiedName(policyName+"/"+a.Key, fldPath.Child("key"))...)
	} else {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	value := fldPath.Child("valueExpression")
	switch trimmed := strings.TrimSpace(a.ValueExpression); {
	case trimmed == "":
		allErrs = append(allErrs, field.Required(value, "valueExpression is not specified"))
	case len(trimmed) > maxAuditAnnotationValueExpressionLength:
		allErrs = append(allErrs, field.Required(value, fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpressionLength)))
	default:
		e := expression{text: trimmed, returns: auditResult}
		allErrs = append(allErrs, compileErrors(compiler, e, plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true},
			stored.auditAnnotations.Has(a.ValueExpression), a.ValueExpression, value)...)
	}
	return allErrs
}

func validatePolicyStatus(status *admissionregistrationv1.ValidatingAdmissionPolicyStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if tc := status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			p := fldPath.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				allErrs = append(allErrs, field.Required(p.Child("warning"), ""))
			}
			allErrs = append(allErrs, validateFieldRef(w.FieldRef, p.Child("fieldRef"))...)
		}
	}
	return append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
}

// validateFieldRef: a JSONPath (kube checks no more, for easier upgrades
// and rollbacks).
func validateFieldRef(ref string, fldPath *field.Path) field.ErrorList {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if err := jsonpath.New("spec").Parse(fmt.Sprintf("{%s}", ref)); err != nil {
		return field.ErrorList{field.Invalid(fldPath, ref, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}

func validateMutatingPolicy(p, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	var opts policyOptions
	if old != nil {
		opts.ignoreMatchConditions = apiequality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) && apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
		opts.stored = storedOf(old.Spec.MatchConditions, nil, nil, old.Spec.Mutations)
	}
	allErrs := corevalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	fldPath, spec := field.NewPath("spec"), &p.Spec
	compiler := newCompiler(true)
	allErrs = append(allErrs, validatePolicyCommon(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, spec.MatchConditions, spec.Variables, compiler, opts, fldPath)...)
	if mc := spec.MatchConstraints; mc != nil {
		allErrs = append(allErrs, validateMutatingOperations(mc.ResourceRules, fldPath.Child("matchConstraints", "resourceRules", "operations"))...)
	}
	if len(spec.Mutations) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		allErrs = append(allErrs, validateMutation(compiler, &spec.Mutations[i], spec.ParamKind != nil, opts.stored, fldPath.Child("mutations").Index(i))...)
	}
	if spec.ReinvocationPolicy == "" {
		return append(allErrs, field.Required(fldPath.Child("reinvocationPolicy"), ""))
	}
	return append(allErrs, validateEnum(&spec.ReinvocationPolicy, supportedReinvocationPolicies, fldPath.Child("reinvocationPolicy"))...)
}

// validateMutatingOperations refuses DELETE among the rules' operations
// (the path names no rule, as kube's).
func validateMutatingOperations(rules []admissionregistrationv1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, r := range rules {
		for _, op := range r.Operations {
			if !mutatingOperations.Has(string(op)) {
				allErrs = append(allErrs, field.NotSupported(fldPath, op, sets.List(mutatingOperations)))
			}
		}
	}
	return allErrs
}

func validateMutation(compiler plugincel.Compiler, m *admissionregistrationv1.Mutation, params bool, stored storedExpressions, fldPath *field.Path) field.ErrorList {
	// The member the patch type names must be set, the other not.
	type member struct {
		name       string
		expression *string
		returns    []*celgo.Type
	}
	jsonPatch, applyConfig := member{name: "jsonPatch", returns: jsonPatchResult}, member{name: "applyConfiguration", returns: applyConfigResult}
	if m.JSONPatch != nil {
		jsonPatch.expression = &m.JSONPatch.Expression
	}
	if m.ApplyConfiguration != nil {
		applyConfig.expression = &m.ApplyConfiguration.Expression
	}
	var want, other member
	switch m.PatchType {
	case "":
		return field.ErrorList{field.Required(fldPath.Child("patchType"), "")}
	case admissionregistrationv1.PatchTypeJSONPatch:
		want, other = jsonPatch, applyConfig
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		want, other = applyConfig, jsonPatch
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("patchType"), m.PatchType, sets.List(supportedPatchType))}
	}
	var allErrs field.ErrorList
	if want.expression == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child(want.name), "must be specified when patchType is "+string(m.PatchType)))
	} else if trimmed, p := strings.TrimSpace(*want.expression), fldPath.Child(want.name, "expression"); trimmed == "" {
		allErrs = append(allErrs, field.Required(p, ""))
	} else {
		decls := plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true, HasPatchTypes: true}
		allErrs = append(allErrs, compileErrors(compiler, expression{text: trimmed, returns: want.returns}, decls, stored.mutations.Has(*want.expression), trimmed, p)...)
	}
	if other.expression != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child(other.name), "{"+other.name+"}", "must not be specified when patchType is "+string(m.PatchType)))
	}
	return allErrs
}

// storedOf collects the expressions of a stored policy, by role.
func storedOf(conditions []admissionregistrationv1.MatchCondition, validations []admissionregistrationv1.Validation,
	annotations []admissionregistrationv1.AuditAnnotation, mutations []admissionregistrationv1.Mutation) storedExpressions {
	s := storedExpressions{sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string]()}
	for _, c := range conditions {
		s.matchConditions.Insert(c.Expression)
	}
	for _, v := range validations {
		s.validations.Insert(v.Expression)
		if v.MessageExpression != "" {
			s.messages.Insert(v.MessageExpression)
		}
	}
	for _, a := range annotations {
		s.auditAnnotations.Insert(a.ValueExpression)
	}
	for _, m := range mutations {
		// sic: kube looks JSON patches up among the apply configurations.
		if m.ApplyConfiguration != nil {
			s.mutations.Insert(m.ApplyConfiguration.Expression)
		}
	}
	return s
}
