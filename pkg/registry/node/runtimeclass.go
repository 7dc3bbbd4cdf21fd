// Package node serves the node.k8s.io group (v1): runtime classes.
package node

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var runtimeClasses = generic.Resource{
	Name: "runtimeclasses", Singular: "runtimeclass", Kind: "RuntimeClass",
	New: generic.NewOf[nodev1.RuntimeClass], NewList: generic.NewOf[nodev1.RuntimeClassList],
	Strategy: runtimeClassStrategy{},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		// kube describes the column with ObjectMeta's (missing) doc.
		{Name: "Handler", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["handler"]},
		generic.AgeColumn,
	}, func(rc *nodev1.RuntimeClass) ([]interface{}, error) {
		return []interface{}{rc.Name, rc.Handler, generic.TranslateTimestampSince(rc.CreationTimestamp)}, nil
	}),
}

// runtimeClassStrategy is kube's: a class may be created by PUT, every
// update names the resourceVersion it read, and the handler (what the
// kubelet's runtime knows it by) cannot change.
type runtimeClassStrategy struct{ generic.BaseStrategy }

func (runtimeClassStrategy) AllowCreateOnUpdate() bool      { return true }
func (runtimeClassStrategy) AllowUnconditionalUpdate() bool { return false }

// Validate: kube 1.37 checks the handler declaratively, after the rest.
func (runtimeClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	rc := obj.(*nodev1.RuntimeClass)
	allErrs := validateRuntimeClass(rc, false)
	handler := field.NewPath("handler")
	if rc.Handler == "" {
		return append(allErrs, field.Required(handler, ""))
	}
	return append(allErrs, validate.ShortName(context.Background(), operation.Operation{}, handler, &rc.Handler, nil)...)
}

// ValidateUpdate: when the handler changed, kube's declarative rules stop
// at saying it is immutable (and required, when emptied); the
// handwritten check of its format stands in its place.
func (runtimeClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	rc, oldRC := obj.(*nodev1.RuntimeClass), old.(*nodev1.RuntimeClass)
	allErrs := validateRuntimeClass(rc, true)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&rc.ObjectMeta, &oldRC.ObjectMeta, field.NewPath("metadata"))...)
	if rc.Handler != oldRC.Handler {
		allErrs = append(allErrs, field.Invalid(field.NewPath("handler"), nil, apivalidation.FieldImmutableErrorMsg))
		if rc.Handler == "" {
			allErrs = append(allErrs, field.Required(field.NewPath("handler"), ""))
		}
	}
	return allErrs
}

func (runtimeClassStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return runtimeClassWarnings(obj.(*nodev1.RuntimeClass))
}

func (runtimeClassStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return runtimeClassWarnings(obj.(*nodev1.RuntimeClass))
}

// validateRuntimeClass is kube's handwritten validation; withHandler adds
// the handler's format check (a DNS label).
func validateRuntimeClass(rc *nodev1.RuntimeClass, withHandler bool) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&rc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if withHandler && rc.Handler != "" {
		for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		allErrs = append(allErrs, corevalidation.ValidateContainerResources(&corev1.ResourceRequirements{Limits: rc.Overhead.PodFixed}, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		allErrs = append(allErrs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		allErrs = append(allErrs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	return allErrs
}

// validateTolerations checks tolerations as a pod's, and refuses two
// equal but for their tolerationSeconds.
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	allErrs := podspec.ValidateTolerations(tolerations, fldPath)
	type listKey struct{ key, operator, value, effect string }
	seen := map[listKey]bool{}
	for i, t := range tolerations {
		k := listKey{t.Key, string(t.Operator), t.Value, string(t.Effect)}
		if seen[k] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), corevalidation.InternalValue(t)))
		}
		seen[k] = true
	}
	return allErrs
}

// runtimeClassWarnings names deprecated node labels in the node selector.
func runtimeClassWarnings(rc *nodev1.RuntimeClass) []string {
	if rc.Scheduling == nil {
		return nil
	}
	var warnings []string
	for _, key := range slices.Sorted(maps.Keys(rc.Scheduling.NodeSelector)) {
		if msg, ok := podspec.DeprecatedNodeLabel(key); ok {
			warnings = append(warnings, field.NewPath("scheduling", "nodeSelector").String()+": "+msg)
		}
	}
	return warnings
}

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// RuntimeClasses is the runtime classes' store, which kube's
	// RuntimeClass admission reads.
	RuntimeClasses *generic.Store
}

// NewRESTStorageProvider returns the provider of node.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(nodev1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{RuntimeClasses: s[0]} }, runtimeClasses)
}
