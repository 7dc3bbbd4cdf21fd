package admissionpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// validatingPolicy is a ValidatingAdmissionPolicy compiled.
type validatingPolicy struct {
	*admissionregistrationv1.ValidatingAdmissionPolicy
	common
	validations     plugincel.ConditionEvaluator
	messages        plugincel.ConditionEvaluator
	auditAnnotation plugincel.ConditionEvaluator
}

func (p *validatingPolicy) name() string       { return p.Name }
func (p *validatingPolicy) policyName() string { return "" }

// validatingBinding is a ValidatingAdmissionPolicyBinding compiled.
type validatingBinding struct {
	*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	bound
}

func compileValidatingBinding(obj runtime.Object) *validatingBinding {
	b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	return &validatingBinding{b, newBound(b.Name, b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources)}
}

// compileValidatingPolicy compiles a policy's expressions as kube's
// plugin does, in the stored-expressions environment: variables first,
// which the other expressions may use.
func (r *Resources) compileValidatingPolicy(obj runtime.Object) *validatingPolicy {
	p := &validatingPolicy{ValidatingAdmissionPolicy: obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)}
	spec := &p.Spec
	p.common = r.compileCommon(policySpec{name: p.Name, constraints: spec.MatchConstraints, paramKind: spec.ParamKind,
		failurePolicy: spec.FailurePolicy, variables: spec.Variables, matchConditions: spec.MatchConditions})
	if p.compileErr != nil {
		return p
	}
	c, decls := p.compiler, p.decls
	validations := make([]plugincel.ExpressionAccessor, len(spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(spec.Validations))
	for i := range spec.Validations {
		validations[i] = &validationExpression{spec.Validations[i]}
		if text := spec.Validations[i].MessageExpression; text != "" {
			messages[i] = &messageExpression{text}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(spec.AuditAnnotations))
	for i := range spec.AuditAnnotations {
		audits[i] = &auditAnnotationExpression{spec.AuditAnnotations[i]}
	}
	// messageExpressions cannot call the authorizer (kube's declarations).
	noAuthz := plugincel.OptionalVariableDeclarations{HasParams: decls.HasParams}
	p.validations = c.CompileCondition(validations, decls, environment.StoredExpressions)
	p.messages = c.CompileCondition(messages, noAuthz, environment.StoredExpressions)
	p.auditAnnotation = c.CompileCondition(audits, decls, environment.StoredExpressions)
	return p
}

func (r *Resources) hasKind(gvk schema.GroupVersionKind) bool {
	_, ok := r.ForKind(gvk)
	return ok
}
