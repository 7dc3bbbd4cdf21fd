package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// CEL expressions are compiled and type-checked by k8s.io/apiserver's
// admission CEL environment (the variables object, oldObject, request,
// params, namespaceObject, authorizer, variables, and kube's libraries),
// as kube's validation does: compile errors are kube's, word for word.
// Evaluating them is admission's business.

// expression is one expression to compile, with the types its result
// may have (kube's accessors' ReturnTypes).
type expression struct {
	name, text string
	returns    []*celgo.Type
}

func (e expression) GetExpression() string      { return e.text }
func (e expression) ReturnTypes() []*celgo.Type { return e.returns }
func (e expression) GetName() string            { return e.name }

var (
	boolResult        = []*celgo.Type{celgo.BoolType}
	stringResult      = []*celgo.Type{celgo.StringType}
	auditResult       = []*celgo.Type{celgo.StringType, celgo.NullType}
	variableResult    = []*celgo.Type{celgo.AnyType, celgo.DynType}
	applyConfigResult = []*celgo.Type{celtypes.NewObjectType("Object")}
	jsonPatchResult   = []*celgo.Type{celgo.ListType(celtypes.NewObjectType("JSONPatch"))}
	statelessCompiler = sync.OnceValue(func() plugincel.Compiler { return plugincel.NewCompiler(baseEnv()) })
	celIdentifier     = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReservedWords  = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
		"if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
	supportedPatchType = sets.New(string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch))
)

// baseEnv is kube's CEL environment at this server's compatibility
// version (1.37).
func baseEnv() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
}

// newCompiler returns a compiler; with composition, one that also
// declares "variables" and learns each variable compiled, in order
// (stateful: one per policy).
func newCompiler(composition bool) plugincel.Compiler {
	if !composition {
		return statelessCompiler()
	}
	c, err := plugincel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return statelessCompiler() // kube does the same; cannot happen with the base environment
	}
	return c
}

// storedExpressions are the expressions an update finds in the stored
// object, by role: they compile in kube's stored-expressions environment
// (every library it ever had), so that an update keeps what once was
// valid.
type storedExpressions struct {
	matchConditions, validations, messages, auditAnnotations, mutations sets.Set[string]
}

// compileErrors compiles e and returns its error as kube reports it.
// shown is the expression the error quotes.
func compileErrors(c plugincel.Compiler, e expression, decls plugincel.OptionalVariableDeclarations, stored bool, shown string, fldPath *field.Path) field.ErrorList {
	env := environment.NewExpressions
	if stored {
		env = environment.StoredExpressions
	}
	var res plugincel.CompilationResult
	if composited, ok := c.(*plugincel.CompositedCompiler); ok && e.name != "" {
		res = composited.CompileAndStoreVariable(e, decls, env)
	} else {
		res = c.CompileCELExpression(e, decls, env)
	}
	if res.Error == nil {
		return nil
	}
	switch res.Error.Type {
	case apiservercel.ErrorTypeRequired:
		return field.ErrorList{field.Required(fldPath, res.Error.Detail)}
	case apiservercel.ErrorTypeInvalid:
		return field.ErrorList{field.Invalid(fldPath, shown, res.Error.Detail)}
	case apiservercel.ErrorTypeInternal:
		return field.ErrorList{field.InternalError(fldPath, res.Error)}
	}
	return field.ErrorList{field.InternalError(fldPath, fmt.Errorf("unsupported error type: %w", res.Error))}
}

// validateMatchConditions: at most 64, named by unique qualified names,
// each a boolean expression (params declared where the policy has them).
func validateMatchConditions(conditions []admissionregistrationv1.MatchCondition, stored sets.Set[string], params bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(conditions) > 64 {
		allErrs = append(allErrs, field.TooMany(fldPath, len(conditions), 64))
	}
	names := sets.New[string]()
	for i, mc := range conditions {
		p := fldPath.Index(i)
		if text := strings.TrimSpace(mc.Expression); text == "" {
			allErrs = append(allErrs, field.Required(p.Child("expression"), ""))
		} else {
			decls := plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}
			allErrs = append(allErrs, compileErrors(statelessCompiler(), expression{text: text, returns: boolResult}, decls, stored.Has(text), text, p.Child("expression"))...)
		}
		if mc.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			allErrs = append(allErrs, validateQualifiedName(mc.Name, p.Child("name"))...)
		}
		if mc.Name != "" {
			if names.Has(mc.Name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), mc.Name))
			}
			names.Insert(mc.Name)
		}
	}
	return allErrs
}

// isCELIdentifier: a CEL identifier that is not a reserved word.
func isCELIdentifier(name string) bool {
	return celIdentifier.MatchString(name) && !celReservedWords.Has(name)
}

func validateQualifiedName(v string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(v) {
		allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
	}
	return allErrs
}
