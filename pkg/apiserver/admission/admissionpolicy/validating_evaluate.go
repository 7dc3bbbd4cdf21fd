package admissionpolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// outcome is what one evaluation of a policy (for one binding and one
// param) decided.
type outcome struct {
	verdicts []verdict
	audits   []auditResult
}

// verdict is one validation's result: deny (by the expression, or by a
// failure under failurePolicy Fail) with its message and reason.
type verdict struct {
	deny    bool
	message string
	reason  metav1.StatusReason
}

// auditResult is one audit annotation's result: a value to publish, or
// an error that denies (failurePolicy Fail).
type auditResult struct {
	key, value string
	publish    bool
	err        string
}

// maxAuditAnnotationValue bounds a published value, as kube does.
const maxAuditAnnotationValue = 10 * 1024

// failure is the verdict of an error: deny under failurePolicy Fail.
func (p *validatingPolicy) failure(msg string) outcome {
	return outcome{verdicts: []verdict{{deny: !p.ignoresFailures(), message: msg}}}
}

// validate evaluates the policy's match conditions, validations, message
// expressions and audit annotations on one request and param, with kube's
// runtime cost budget, as kube's validator does.
func (p *validatingPolicy) validate(ctx context.Context, gvr schema.GroupVersionResource, va *admission.VersionedAttributes,
	param runtime.Object, ns *corev1.Namespace, authz authorizer.UnconditionalAuthorizer) outcome {
	if p.compileErr != nil {
		return p.failure(p.compileErr.Error())
	}
	if p.matchConditions != nil {
		m := p.matchConditions.Match(ctx, va, param, authz)
		if m.Error != nil {
			return p.failure(m.Error.Error())
		}
		if !m.Matches {
			return outcome{}
		}
	}
	req := plugincel.CreateAdmissionRequest(va.Attributes, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(va.VersionedKind))
	nsObj := plugincel.CreateNamespaceObject(ns)
	withAuthz := plugincel.OptionalVariableBindings{VersionedParams: param, Authorizer: authz}
	noAuthz := plugincel.OptionalVariableBindings{VersionedParams: param}
	results, budget, err := p.validations.ForInput(ctx, va, req, withAuthz, nsObj, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return p.failure(err.Error())
	}
	messages, _, msgErr := p.messages.ForInput(ctx, va, req, noAuthz, nsObj, budget)
	o := outcome{verdicts: make([]verdict, len(results))}
	for i, r := range results {
		v := &o.verdicts[i]
		validation := p.Spec.Validations[i]
		switch {
		case r.Error != nil:
			v.deny, v.message = !p.ignoresFailures(), r.Error.Error()
		case errors.Is(msgErr, apiservercel.ErrInternal) || errors.Is(msgErr, apiservercel.ErrOutOfBudget):
			v.deny, v.message = !p.ignoresFailures(), fmt.Sprintf("failed messageExpression: %s", msgErr)
		case r.EvalResult != celtypes.True:
			v.deny, v.reason = true, metav1.StatusReasonInvalid
			if validation.Reason != nil {
				v.reason = *validation.Reason
			}
			var msg *plugincel.EvaluationResult
			if i < len(messages) {
				msg = &messages[i]
			}
			v.message = denialMessage(validation, msg)
		}
	}
	audits, _, err := p.auditAnnotation.ForInput(ctx, va, req, noAuthz, ns, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return p.failure(err.Error())
	}
	o.audits = p.auditResults(audits)
	return o
}

// denialMessage is the messageExpression's result when it is a usable
// string (one line, not too long, not blank), else the message, else
// the expression.
func denialMessage(v admissionregistrationv1.Validation, msg *plugincel.EvaluationResult) string {
	if msg != nil && msg.Error == nil && msg.EvalResult != nil {
		if s, ok := msg.EvalResult.Value().(string); ok {
			s = strings.TrimSpace(s)
			if len(s) <= celconfig.MaxEvaluatedMessageExpressionSizeBytes && !strings.Contains(s, "\n") && s != "" {
				return s
			}
		}
	}
	if m := strings.TrimSpace(v.Message); m != "" {
		return m
	}
	return fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.Expression))
}

// auditResults turns the audit annotations' values into what to publish:
// blank strings and null are left out; errors deny under failurePolicy
// Fail and are left out under Ignore.
func (p *validatingPolicy) auditResults(results []plugincel.EvaluationResult) []auditResult {
	out := make([]auditResult, 0, len(results))
	for i, r := range results {
		if r.ExpressionAccessor == nil {
			continue
		}
		an := p.Spec.AuditAnnotations[i]
		res := auditResult{key: an.Key}
		switch {
		case r.Error != nil:
			if !p.ignoresFailures() {
				res.err = r.Error.Error()
			}
		case r.EvalResult.Type() == celtypes.StringType:
			value := strings.TrimSpace(r.EvalResult.Value().(string))
			if len(value) > maxAuditAnnotationValue {
				value = value[:maxAuditAnnotationValue]
			}
			res.value, res.publish = value, value != ""
		case r.EvalResult.Type() == celtypes.NullType:
		default:
			res.err = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. "+
				"Return type must be either string or null.", an.ValueExpression, r.EvalResult.Type())
		}
		out = append(out, res)
	}
	return out
}
