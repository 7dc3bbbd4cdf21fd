package policy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// mutatingPolicy is a MutatingAdmissionPolicy compiled: its mutations are
// k8s.io/apiserver's patchers (JSON patch, apply configuration).
type mutatingPolicy struct {
	*admissionregistrationv1.MutatingAdmissionPolicy
	constraints     *criteria
	configErr       error
	paramErr        error
	compiler        *plugincel.CompositedCompiler
	matchConditions matchconditions.Matcher
	patchers        []patch.Patcher
	compileErr      error
}

func (p *mutatingPolicy) name() string       { return p.Name }
func (p *mutatingPolicy) policyName() string { return "" }

func (p *mutatingPolicy) failurePolicy() admissionregistrationv1.FailurePolicyType {
	if p.Spec.FailurePolicy == nil {
		return admissionregistrationv1.Fail
	}
	return *p.Spec.FailurePolicy
}

// mutatingBinding is a MutatingAdmissionPolicyBinding with its match
// resources parsed.
type mutatingBinding struct {
	*admissionregistrationv1.MutatingAdmissionPolicyBinding
	criteria *criteria
	err      error
}

func (b *mutatingBinding) name() string       { return b.Name }
func (b *mutatingBinding) policyName() string { return b.Spec.PolicyName }

func compileMutatingBinding(obj runtime.Object) *mutatingBinding {
	b := &mutatingBinding{MutatingAdmissionPolicyBinding: obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)}
	if m := b.Spec.MatchResources; m != nil {
		b.criteria, b.err = newCriteria(m)
	}
	return b
}

// compileMutatingPolicy compiles a policy's variables, match conditions
// and mutations, as kube's plugin does.
func (r *Resources) compileMutatingPolicy(obj runtime.Object) *mutatingPolicy {
	p := &mutatingPolicy{MutatingAdmissionPolicy: obj.(*admissionregistrationv1.MutatingAdmissionPolicy)}
	spec := &p.Spec
	p.constraints, p.configErr, p.paramErr = r.checkConstraints(spec.MatchConstraints, spec.ParamKind)
	c, decls, err := newCompiler(spec.Variables, spec.ParamKind != nil)
	if err != nil {
		p.compileErr = err
		return p
	}
	p.compiler = c
	// kube's mutating plugin names its match conditions "validate" too.
	p.matchConditions = compileMatchConditions(c, decls, spec.MatchConditions, spec.FailurePolicy, "validate", p.Name)
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

// checkConstraints parses a policy's match constraints and finds its
// paramKind: errors in the first fail every request, an unknown
// paramKind only the requests the policy matches.
func (r *Resources) checkConstraints(m *admissionregistrationv1.MatchResources, pk *admissionregistrationv1.ParamKind) (*criteria, error, error) {
	var c *criteria
	var configErr, paramErr error
	if m == nil {
		configErr = fmt.Errorf("policy contained no match constraints, a required field")
	} else {
		c, configErr = newCriteria(m)
	}
	if pk != nil {
		gv, err := schema.ParseGroupVersion(pk.APIVersion)
		if err != nil {
			paramErr = fmt.Errorf("failed to parse paramKind APIVersion: %w", err)
		} else if gvk := gv.WithKind(pk.Kind); !r.hasKind(gvk) {
			paramErr = fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
		}
	}
	return c, configErr, paramErr
}
