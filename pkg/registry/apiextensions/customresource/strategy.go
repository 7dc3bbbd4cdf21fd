package customresource

import (
	"context"
	"fmt"
	"math"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// strategy is kube's strategy of custom resources, validating at one
// version v. Writes reach it as objects of the storage version (the
// Store's kind): what it checks of them it checks on them converted to v,
// the version the client wrote.
type strategy struct {
	generic.BaseStrategy
	r *resource
	v *version
}

var (
	_ generic.Strategy         = strategy{}
	_ rest.Defaulter           = strategy{}
	_ rest.ResetFieldsStrategy = strategy{}
)

func newStrategy(r *resource, v *version) strategy {
	return strategy{BaseStrategy: generic.BaseStrategy{Namespaced: r.namespaced}, r: r, v: v}
}

func (strategy) AllowUnconditionalUpdate() bool { return false }

// Default implements rest.Defaulter: the defaults of the schema of the
// object's own version.
func (s strategy) Default(obj runtime.Object) {
	s.r.applyDefaults(obj.(*unstructured.Unstructured).Object)
}

// PruneUnknownFields implements rest.UnknownFieldPruner.
func (s strategy) PruneUnknownFields(obj runtime.Object) ([]string, error) {
	return s.r.pruneRequest(obj)
}

// GetResetFields implements rest.ResetFieldsStrategy: the status, at every
// version with a status subresource.
func (s strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.r.resetFields("status")
}

func (s strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	if s.v.hasStatus() {
		delete(u.Object, "status")
	}
	generic.StartGeneration(u)
}

// PrepareForUpdate keeps the status (with a status subresource), and
// counts a change of anything but metadata as a new generation.
func (s strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, oldU := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if s.v.hasStatus() {
		if status, ok := oldU.Object["status"]; ok {
			u.Object["status"] = status
		} else {
			delete(u.Object, "status")
		}
	}
	if !apiequality.Semantic.DeepEqual(withoutMetadata(u.Object), withoutMetadata(oldU.Object)) {
		generic.BumpGeneration(u, oldU)
	}
}

func withoutMetadata(obj map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

func (s strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u, err := s.r.at(s.v, obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	// As kube: an object of another kind gets no further than its kind
	// in the schema's checks; the embedded metadata, lists and rules
	// are checked anyway.
	errs := s.validateTypeMeta(u)
	if len(errs) == 0 {
		errs = append(errs, s.validateMetadata(ctx, u, nil)...)
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.Object, s.v.validator)...)
		errs = append(errs, s.validateScale(u, true)...)
	}
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, s.v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.v.structural, u.Object)...)
	return append(errs, s.validateRules(ctx, errs, u, nil, nil)...)
}

func (s strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, oldU, convErrs := s.r.bothAt(s.v, obj, old)
	if convErrs != nil {
		return convErrs
	}
	// Ratcheting (kube's CRDValidationRatcheting, GA): what was invalid
	// and did not change stays accepted.
	correlated := common.NewCorrelatedObject(u.Object, oldU.Object, &model.Structural{Structural: s.v.structural})
	errs := s.validateTypeMeta(u)
	if len(errs) == 0 {
		errs = append(errs, s.validateMetadata(ctx, u, oldU)...)
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.Object, oldU.Object, s.v.validator,
			apiservervalidation.WithRatcheting(correlated))...)
		errs = append(errs, s.validateScale(u, true)...)
	}
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, s.v.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, s.v.structural, oldU.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.v.structural, u.Object)...)
	}
	return append(errs, s.validateRules(ctx, errs, u, oldU, correlated)...)
}

func (s strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return finalizerWarnings(obj, nil)
}

func (s strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return finalizerWarnings(obj, old)
}

// validateTypeMeta checks that the object is of the version's kind.
func (s strategy) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != s.v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", s.v.gvk.Kind)))
	}
	if want := s.v.gvk.GroupVersion().String(); u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}

// validateMetadata checks the metadata as kube does (old is nil on
// create): names are DNS subdomains.
func (s strategy) validateMetadata(ctx context.Context, u, old *unstructured.Unstructured) field.ErrorList {
	m, errs := objectMeta(u)
	if len(errs) > 0 {
		return errs
	}
	beta := utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta)
	path := field.NewPath("metadata")
	if old == nil {
		return apivalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, m, nil, s.r.namespaced, apivalidation.NameIsDNSSubdomain, path, beta)
	}
	oldM, errs := objectMeta(old)
	if len(errs) > 0 {
		return errs
	}
	return apivalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, m, oldM, s.r.namespaced, nil, path, beta)
}

func objectMeta(u *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw := u.Object["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	m, ok := raw.(map[string]interface{})
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	out := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return out, nil
}

// validateRules runs the CEL rules of the schema, unless errs already
// hold an error that makes them meaningless (a wrong type, a missing
// field), as kube does.
func (s strategy) validateRules(ctx context.Context, errs field.ErrorList, u, old *unstructured.Unstructured, correlated *common.CorrelatedObject) field.ErrorList {
	if s.v.cel == nil {
		return nil
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil,
				"some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	var opts []cel.Option
	var oldObj interface{}
	if old != nil {
		oldObj = old.Object
		opts = append(opts, cel.WithRatcheting(correlated))
	}
	ruleErrs, _ := s.v.cel.Validate(ctx, nil, s.v.structural, u.Object, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return ruleErrs
}

// validateScale checks the replicas the scale subresource reads: the
// spec's (when spec is true) and the status's, and the label selector.
func (s strategy) validateScale(u *unstructured.Unstructured, spec bool) field.ErrorList {
	if !s.v.hasScale() {
		return nil
	}
	scale := s.v.subresources.Scale
	var errs field.ErrorList
	checkReplicas := func(p string) {
		n, _, err := unstructured.NestedInt64(u.Object, splitPath(p)...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(p), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(p), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(p), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if spec {
		checkReplicas(scale.SpecReplicasPath)
	}
	checkReplicas(scale.StatusReplicasPath)
	if p := scale.LabelSelectorPath; p != nil {
		sel, _, err := unstructured.NestedString(u.Object, splitPath(*p)...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*p), sel, err.Error()))
		}
	}
	return errs
}

// splitPath splits a JSON path of a scale subresource (".spec.replicas").
func splitPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

// statusStrategy serves "<plural>/status" at version v: only the status
// changes, checked against the status part of v's schema, its rules and
// the scale's status replicas.
type statusStrategy struct{ strategy }

var _ rest.ResetFieldsStrategy = statusStrategy{}

// GetResetFields implements rest.ResetFieldsStrategy.
func (s statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.r.resetFields("metadata", "spec")
}

// PrepareForUpdate takes the old object with the new status (and the
// managed fields the request recorded).
func (s statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	status, ok := u.Object["status"]
	managed := u.GetManagedFields()
	*u = *old.(*unstructured.Unstructured).DeepCopy()
	u.SetManagedFields(managed)
	if ok {
		u.Object["status"] = status
	} else {
		delete(u.Object, "status")
	}
}

func (s statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, oldU, convErrs := s.r.bothAt(s.v, obj, old)
	if convErrs != nil {
		return convErrs
	}
	correlated := common.NewCorrelatedObject(u.Object, oldU.Object, &model.Structural{Structural: s.v.structural})
	errs := s.validateTypeMeta(u)
	if len(errs) == 0 {
		errs = append(errs, s.validateMetadata(ctx, u, oldU)...)
		if status, ok := u.Object["status"]; ok && s.v.statusValidator != nil {
			errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, oldU.Object["status"],
				s.v.statusValidator, apiservervalidation.WithRatcheting(correlated.Key("status")))...)
		}
		errs = append(errs, s.validateScale(u, false)...)
	}
	if newErrs := structurallisttype.ValidateListSetsAndMaps(nil, s.v.structural, u.Object); len(newErrs) > 0 {
		if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, s.v.structural, oldU.Object); len(oldErrs) == 0 {
			errs = append(errs, newErrs...)
		}
	}
	return append(errs, s.validateRules(ctx, errs, u, oldU, correlated)...)
}

func (statusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
