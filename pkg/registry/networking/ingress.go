package networking

import (
	"context"
	"fmt"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// newIngresses declares the ingresses resource; classes, when set, are
// the IngressClasses, the default of which new ingresses without a class
// get.
func newIngresses(classes rest.Lister) generic.Resource {
	var hooks generic.Hooks
	if classes != nil {
		hooks.BeginCreate = defaultIngressClass(classes)
	}
	return generic.Resource{
		Name: "ingresses", Singular: "ingress", Kind: "Ingress", Namespaced: true,
		ShortNames: []string{"ing"},
		New:        generic.NewOf[networkingv1.Ingress], NewList: generic.NewOf[networkingv1.IngressList],
		Strategy:       ingressStrategy{generic.GenerationStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}},
		StatusStrategy: ingressStatus,
		Hooks:          hooks,
		Table:          ingressTable,
	}
}

var ingressTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
	{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
	{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
	{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
	generic.AgeColumn,
}, func(ing *networkingv1.Ingress) ([]interface{}, error) {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	ports := "80"
	if len(ing.Spec.TLS) != 0 {
		ports = "80, 443"
	}
	return []interface{}{ing.Name, class, ingressHosts(ing.Spec.Rules), ingressAddresses(ing.Status.LoadBalancer),
		ports, generic.TranslateTimestampSince(ing.CreationTimestamp)}, nil
})

// ingressHosts is kube's HOSTS cell: the first three hosts the rules name
// ("*" when none does) and, when rules follow the third, a count that
// (as kube's) subtracts three from the number of rules.
func ingressHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == max {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	s := strings.Join(hosts, ",")
	if more {
		s += fmt.Sprintf(" + %d more...", len(rules)-max)
	}
	return s
}

// ingressAddresses is kube's ADDRESS cell: every distinct IP (or hostname
// of an entry without one), sorted; never clipped, since the server
// prints tables wide.
func ingressAddresses(s networkingv1.IngressLoadBalancerStatus) string {
	seen := map[string]bool{}
	for _, ing := range s.Ingress {
		switch {
		case ing.IP != "":
			seen[ing.IP] = true
		case ing.Hostname != "":
			seen[ing.Hostname] = true
		}
	}
	addrs := make([]string, 0, len(seen))
	for a := range seen {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	return strings.Join(addrs, ",")
}

// ingressClassAnnotation is the deprecated way of naming an ingress's
// class.
const ingressClassAnnotation = "kubernetes.io/ingress.class"

type ingressStrategy struct{ generic.GenerationStrategy }

// GetResetFields implements rest.ResetFieldsStrategy: the main resource does not change status.
func (ingressStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("networking.k8s.io/v1", "status")
}

// Validate checks a new ingress; only on create must the deprecated class
// annotation agree with spec.ingressClassName.
func (ingressStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ing := obj.(*networkingv1.Ingress)
	allErrs := validateIngress(ing, ingressValidationOptions{})
	if class, ok := ing.Annotations[ingressClassAnnotation]; ok && ing.Spec.IngressClassName != nil && class != *ing.Spec.IngressClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("annotations").Child(ingressClassAnnotation), class,
			"must match `ingressClassName` when both are specified"))
	}
	return allErrs
}

func (ingressStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	ing := obj.(*networkingv1.Ingress)
	if _, ok := ing.Annotations[ingressClassAnnotation]; ok && ing.Spec.IngressClassName == nil {
		return []string{fmt.Sprintf("annotation %q is deprecated, please use 'spec.ingressClassName' instead", ingressClassAnnotation)}
	}
	return nil
}

// ValidateUpdate lets an ingress keep what older servers accepted (an
// invalid TLS secret name, invalid rules under a wildcard host), as kube.
func (ingressStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ing, oldIng := obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&ing.ObjectMeta, &oldIng.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateIngress(ing, ingressValidationOptions{
		allowInvalidSecretName:       hasInvalidSecretName(oldIng),
		allowInvalidWildcardHostRule: hasInvalidWildcardHostRule(oldIng),
	})...)
}

// ingressStatus serves ingresses/status: the spec stays (kube lets
// metadata change here).
var ingressStatus = generic.StatusStrategy{Main: ingressStrategy{generic.GenerationStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}},
	GroupVersion: "networking.k8s.io/v1", Validate: validateIngressStatusUpdate, Warnings: ingressStatusWarnings}

// validateIngressStatusUpdate checks the metadata and the load balancer's
// status.
func validateIngressStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ing, oldIng := obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&ing.ObjectMeta, &oldIng.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateIngressLoadBalancerStatus(&ing.Status.LoadBalancer, &oldIng.Status.LoadBalancer,
		field.NewPath("status", "loadBalancer"))...)
}

// ingressStatusWarnings warns of load balancer IPs in a non-standard form
// (kube names the entry, not its ip field).
func ingressStatusWarnings(_ context.Context, obj, _ runtime.Object) []string {
	var warnings []string
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, ing := range obj.(*networkingv1.Ingress).Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			warnings = append(warnings, validation.GetWarningsForIP(p.Index(i), ing.IP)...)
		}
	}
	return warnings
}

// defaultIngressClass is kube's DefaultIngressClass admission: a new
// ingress that names no class (in spec or the deprecated annotation) gets
// the default IngressClass, the newest when several claim to be.
func defaultIngressClass(classes rest.Lister) generic.BeginCreateFunc {
	return func(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (generic.FinishFunc, error) {
		done := func(context.Context, bool) {}
		ing := obj.(*networkingv1.Ingress)
		if _, annotated := ing.Annotations[ingressClassAnnotation]; ing.Spec.IngressClassName != nil || annotated {
			return done, nil
		}
		class, err := defaultClass(request.WithNamespace(ctx, ""), classes)
		if err != nil {
			return nil, apierrors.NewForbidden(networkingv1.Resource("ingresses"), ing.Name, err)
		}
		if class != "" {
			ing.Spec.IngressClassName = &class
		}
		return done, nil
	}
}

// defaultClass names the default IngressClass ("" when there is none):
// the newest one annotated as default, by name among those created in the
// same second.
func defaultClass(ctx context.Context, classes rest.Lister) (string, error) {
	list, err := classes.List(ctx, &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return "", err
	}
	var best *networkingv1.IngressClass
	for _, item := range list.Items {
		ic := &networkingv1.IngressClass{}
		if err := item.Decode(ic); err != nil {
			return "", err
		}
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] != "true" {
			continue
		}
		if best == nil || ic.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(ic.CreationTimestamp.Equal(&best.CreationTimestamp) && ic.Name < best.Name) {
			best = ic
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Name, nil
}

var ingressClasses = generic.Resource{
	Name: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass",
	New: generic.NewOf[networkingv1.IngressClass], NewList: generic.NewOf[networkingv1.IngressClassList],
	Strategy: ingressClassStrategy{},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		generic.AgeColumn,
	}, func(ic *networkingv1.IngressClass) ([]interface{}, error) {
		name := ic.Name
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			name += " (default)"
		}
		parameters := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			parameters = p.Kind
			if p.APIGroup != nil {
				parameters += "." + *p.APIGroup
			}
			parameters += "/" + p.Name
		}
		return []interface{}{name, ic.Spec.Controller, parameters, generic.TranslateTimestampSince(ic.CreationTimestamp)}, nil
	}),
}

// maxIngressClassControllerLen is kube's limit on spec.controller.
const maxIngressClassControllerLen = 250

type ingressClassStrategy struct{ generic.GenerationStrategy }

var _ rest.Defaulter = ingressClassStrategy{}

// Default implements rest.Defaulter: parameters are cluster-scoped unless
// they say otherwise.
func (ingressClassStrategy) Default(obj runtime.Object) {
	if p := obj.(*networkingv1.IngressClass).Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

func (ingressClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ic := obj.(*networkingv1.IngressClass)
	return append(validateIngressClass(ic), declarativeIngressClass(ic, nil)...)
}

// ValidateUpdate: the controller never changes; the rest is validated as
// on create.
func (ingressClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ic, oldIC := obj.(*networkingv1.IngressClass), old.(*networkingv1.IngressClass)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&ic.ObjectMeta, &oldIC.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(ic.Spec.Controller, oldIC.Spec.Controller, field.NewPath("spec", "controller"))...)
	allErrs = append(allErrs, validateIngressClass(ic)...)
	return append(allErrs, declarativeIngressClass(ic, oldIC)...)
}

func validateIngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&ic.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	p := field.NewPath("spec")
	if len(ic.Spec.Controller) > maxIngressClassControllerLen {
		allErrs = append(allErrs, field.TooLong(p.Child("controller"), "", maxIngressClassControllerLen))
	}
	allErrs = append(allErrs, validation.IsDomainPrefixedPath(p.Child("controller"), ic.Spec.Controller)...)
	return append(allErrs, validateIngressClassParameters(ic.Spec.Parameters, p.Child("parameters"))...)
}

// validateIngressClassParameters checks the reference to the class's
// parameters, but for the required kind and name: the declarative rules
// (declarativeIngressClass) report those, after the others.
func validateIngressClassParameters(params *networkingv1.IngressClassParametersReference, fldPath *field.Path) field.ErrorList {
	if params == nil {
		return nil
	}
	var allErrs field.ErrorList
	if params.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*params.APIGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroup"), *params.APIGroup, msg))
		}
	}
	if params.Kind != "" {
		allErrs = append(allErrs, pathSegment(params.Kind, fldPath.Child("kind"))...)
	}
	if params.Name != "" {
		allErrs = append(allErrs, pathSegment(params.Name, fldPath.Child("name"))...)
	}
	if params.Scope == nil {
		return append(allErrs, field.Required(fldPath.Child("scope"), ""))
	}
	switch *params.Scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if params.Namespace == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			for _, msg := range apivalidation.ValidateNamespaceName(*params.Namespace, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), *params.Namespace, msg))
			}
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if params.Namespace != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), *params.Scope, []string{
			networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
	}
	return allErrs
}

// declarativeIngressClass is what kube 1.37 checks from the API types'
// declarative rules: the parameters' kind and name are required. As
// there, an update does not check again a value it leaves as it was.
func declarativeIngressClass(ic, old *networkingv1.IngressClass) field.ErrorList {
	params := ic.Spec.Parameters
	if params == nil {
		return nil
	}
	var oldParams *networkingv1.IngressClassParametersReference
	if old != nil {
		oldParams = old.Spec.Parameters
	}
	p := field.NewPath("spec", "parameters")
	var allErrs field.ErrorList
	if oldParams == nil || oldParams.Kind != params.Kind {
		allErrs = append(allErrs, requiredValue(params.Kind, p.Child("kind"))...)
	}
	if oldParams == nil || oldParams.Name != params.Name {
		allErrs = append(allErrs, requiredValue(params.Name, p.Child("name"))...)
	}
	return allErrs
}
