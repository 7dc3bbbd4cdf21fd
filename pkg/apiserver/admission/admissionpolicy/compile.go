package admissionpolicy

import (
	"fmt"
	"sync"

	celgo "github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The expressions of a policy, as k8s.io/apiserver's CEL compiler takes
// them (kube's accessors, which live in its admission plugin packages).

type validationExpression struct {
	admissionregistrationv1.Validation
}

func (v *validationExpression) GetExpression() string      { return v.Expression }
func (v *validationExpression) ReturnTypes() []*celgo.Type { return []*celgo.Type{celgo.BoolType} }

type messageExpression struct{ text string }

func (m *messageExpression) GetExpression() string      { return m.text }
func (m *messageExpression) ReturnTypes() []*celgo.Type { return []*celgo.Type{celgo.StringType} }

type auditAnnotationExpression struct {
	admissionregistrationv1.AuditAnnotation
}

func (a *auditAnnotationExpression) GetExpression() string { return a.ValueExpression }
func (a *auditAnnotationExpression) ReturnTypes() []*celgo.Type {
	return []*celgo.Type{celgo.StringType, celgo.NullType}
}

type variableExpression struct {
	admissionregistrationv1.Variable
}

func (v *variableExpression) GetExpression() string { return v.Expression }
func (v *variableExpression) GetName() string       { return v.Name }
func (v *variableExpression) ReturnTypes() []*celgo.Type {
	return []*celgo.Type{celgo.AnyType, celgo.DynType}
}

// compositionEnv is kube's CEL environment at this server's compatibility
// version, shared by every policy's compiler. It is built by the first
// policy compiled, not at init: a server without admission policies never
// pays for it (about a megabyte of heap).
var compositionEnv = sync.OnceValue(func() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
})

// newCompiler returns a compiler that knows the policy's variables, in
// kube's stored-expressions environment (a policy once admitted keeps
// compiling), and the declarations of the policy's expressions.
func newCompiler(variables []admissionregistrationv1.Variable, params bool) (*plugincel.CompositedCompiler, plugincel.OptionalVariableDeclarations, error) {
	decls := plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}
	c, err := plugincel.NewCompositedCompiler(compositionEnv())
	if err != nil {
		return nil, decls, err
	}
	vars := make([]plugincel.NamedExpressionAccessor, len(variables))
	for i := range variables {
		vars[i] = &variableExpression{variables[i]}
	}
	c.CompileAndStoreVariables(vars, decls, environment.StoredExpressions)
	return c, decls, nil
}

// compileMatchConditions returns the matcher of a policy's
// matchConditions (nil without any).
func compileMatchConditions(c *plugincel.CompositedCompiler, decls plugincel.OptionalVariableDeclarations,
	conditions []admissionregistrationv1.MatchCondition, failurePolicy *admissionregistrationv1.FailurePolicyType,
	kind, name string) matchconditions.Matcher {
	if len(conditions) == 0 {
		return nil
	}
	exprs := make([]plugincel.ExpressionAccessor, len(conditions))
	for i := range conditions {
		exprs[i] = (*matchconditions.MatchCondition)(&conditions[i])
	}
	return matchconditions.NewMatcher(c.CompileCondition(exprs, decls, environment.StoredExpressions), failurePolicy, "policy", kind, name)
}

// criteria are match resources with their selectors parsed once.
type criteria struct {
	admissionregistrationv1.MatchResources
	namespaceSelector, objectSelector labels.Selector
}

// GetParsedObjectSelector implements object.ObjectSelectorProvider.
func (c *criteria) GetParsedObjectSelector() (labels.Selector, error) { return c.objectSelector, nil }

// newCriteria parses m's selectors; nil selectors are a configuration
// error, as kube's matcher reports it.
func newCriteria(m *admissionregistrationv1.MatchResources) (*criteria, error) {
	c := &criteria{MatchResources: *m}
	if m.NamespaceSelector == nil {
		return nil, errNilSelector("namespace")
	}
	if m.ObjectSelector == nil {
		return nil, errNilSelector("object")
	}
	var err error
	if c.namespaceSelector, err = metav1.LabelSelectorAsSelector(m.NamespaceSelector); err != nil {
		return nil, err
	}
	if c.objectSelector, err = metav1.LabelSelectorAsSelector(m.ObjectSelector); err != nil {
		return nil, err
	}
	return c, nil
}

// common is what policies of both kinds compile alike.
type common struct {
	name      string
	paramKind *admissionregistrationv1.ParamKind
	failure   admissionregistrationv1.FailurePolicyType
	// constraints are nil when they are missing or wrong (configErr):
	// the policy then fails (or, failurePolicy Ignore, skips) every
	// request; paramErr (an unknown paramKind) only those it matches;
	// compileErr those its bindings select.
	constraints                     *criteria
	configErr, paramErr, compileErr error
	compiler                        *plugincel.CompositedCompiler
	decls                           plugincel.OptionalVariableDeclarations
	matchConditions                 matchconditions.Matcher
}

// policySpec are the fields both kinds of policies have.
type policySpec struct {
	name            string
	constraints     *admissionregistrationv1.MatchResources
	paramKind       *admissionregistrationv1.ParamKind
	failurePolicy   *admissionregistrationv1.FailurePolicyType
	variables       []admissionregistrationv1.Variable
	matchConditions []admissionregistrationv1.MatchCondition
}

// compileCommon checks a policy's constraints and paramKind and compiles
// its variables and match conditions, as kube's plugins do.
func (r *Resources) compileCommon(s policySpec) common {
	c := common{name: s.name, paramKind: s.paramKind, failure: admissionregistrationv1.Fail}
	if s.failurePolicy != nil {
		c.failure = *s.failurePolicy
	}
	if s.constraints == nil {
		c.configErr = fmt.Errorf("policy contained no match constraints, a required field")
	} else {
		c.constraints, c.configErr = newCriteria(s.constraints)
	}
	if pk := s.paramKind; pk != nil {
		gv, err := schema.ParseGroupVersion(pk.APIVersion)
		if err != nil {
			c.paramErr = fmt.Errorf("failed to parse paramKind APIVersion: %w", err)
		} else if gvk := gv.WithKind(pk.Kind); !r.hasKind(gvk) {
			c.paramErr = fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
		}
	}
	c.compiler, c.decls, c.compileErr = newCompiler(s.variables, s.paramKind != nil)
	if c.compileErr == nil {
		// kube's plugins both name their match conditions "validate".
		c.matchConditions = compileMatchConditions(c.compiler, c.decls, s.matchConditions, s.failurePolicy, "validate", s.name)
	}
	return c
}

func (c *common) ignoresFailures() bool { return c.failure == admissionregistrationv1.Ignore }

// bound is what bindings of both kinds compile alike.
type bound struct {
	bindingName, policy string
	paramRef            *admissionregistrationv1.ParamRef
	criteria            *criteria // nil: every request the policy matches
	err                 error
}

func newBound(name, policy string, ref *admissionregistrationv1.ParamRef, m *admissionregistrationv1.MatchResources) bound {
	b := bound{bindingName: name, policy: policy, paramRef: ref}
	if m != nil {
		b.criteria, b.err = newCriteria(m)
	}
	return b
}

// binding implements the binding constraint: a compiled binding is, or
// embeds, its bound part.
func (b *bound) binding() *bound { return b }

func (b *bound) name() string       { return b.bindingName }
func (b *bound) policyName() string { return b.policy }
