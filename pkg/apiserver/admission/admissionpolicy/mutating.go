package admissionpolicy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/cel/environment"
)

// mutatingPolicy is a MutatingAdmissionPolicy compiled: its mutations are
// k8s.io/apiserver's patchers (JSON patch, apply configuration).
type mutatingPolicy struct {
	*admissionregistrationv1.MutatingAdmissionPolicy
	common
	patchers []patch.Patcher
}

func (p *mutatingPolicy) name() string       { return p.Name }
func (p *mutatingPolicy) policyName() string { return "" }

// compileMutatingBinding compiles a MutatingAdmissionPolicyBinding: its
// bound part is all a mutation uses of it.
func compileMutatingBinding(obj runtime.Object) *bound {
	b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
	compiled := newBound(b.Name, b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources)
	return &compiled
}

// compileMutatingPolicy compiles a policy's variables, match conditions
// and mutations, as kube's plugin does.
func (r *Resources) compileMutatingPolicy(obj runtime.Object) *mutatingPolicy {
	p := &mutatingPolicy{MutatingAdmissionPolicy: obj.(*admissionregistrationv1.MutatingAdmissionPolicy)}
	spec := &p.Spec
	p.common = r.compileCommon(policySpec{name: p.Name, constraints: spec.MatchConstraints, paramKind: spec.ParamKind,
		failurePolicy: spec.FailurePolicy, variables: spec.Variables, matchConditions: spec.MatchConditions})
	if p.compileErr != nil {
		return p
	}
	c, decls := p.compiler, p.decls
	patchDecls := decls
	patchDecls.HasPatchTypes = true
	for _, m := range spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			e := c.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchDecls, environment.StoredExpressions)
			p.patchers = append(p.patchers, patch.NewJSONPatcher(e))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			e := c.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchDecls, environment.StoredExpressions)
			p.patchers = append(p.patchers, patch.NewApplyConfigurationPatcher(e))
		}
	}
	return p
}
