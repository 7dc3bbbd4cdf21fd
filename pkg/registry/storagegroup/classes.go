package storagegroup

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var storageClasses = generic.Resource{
	Name: "storageclasses", Singular: "storageclass", Kind: "StorageClass",
	ShortNames: []string{"sc"},
	New:        generic.NewOf[storagev1.StorageClass], NewList: generic.NewOf[storagev1.StorageClassList],
	Strategy: storageClassStrategy{},
	// kube returns the deleted object, not a Status.
	ReturnDeletedObject: true,
	Table:               storageClassTable{},
}

// Annotations that make a class the default of claims naming none: the
// GA one and the beta one kube still honours.
const (
	IsDefaultStorageClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// IsDefaultClass reports whether sc is marked the default class.
func IsDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations[IsDefaultStorageClassAnnotation] == "true" || sc.Annotations[betaIsDefaultStorageClassAnnotation] == "true"
}

// DefaultClass returns the class claims without one get, as kube picks
// it among several marked default: the newest, then the first by name.
// nil when none is marked.
func DefaultClass(classes []*storagev1.StorageClass) *storagev1.StorageClass {
	var defaults []*storagev1.StorageClass
	for _, sc := range classes {
		if IsDefaultClass(sc) {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0]
}

type storageClassStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = storageClassStrategy{}

// Default implements rest.Defaulter: volumes are deleted with their claim
// and bound at once.
func (storageClassStrategy) Default(obj runtime.Object) {
	sc := obj.(*storagev1.StorageClass)
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	}
}

func (storageClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	sc := obj.(*storagev1.StorageClass)
	return append(validateStorageClass(sc), requiredValue(field.NewPath("provisioner"), sc.Provisioner)...)
}

func (storageClassStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return storageClassWarnings(obj.(*storagev1.StorageClass))
}

// ValidateUpdate: the provisioner, its parameters and the policies are
// immutable; kube 1.37 says so in its declarative words, after the rest.
func (storageClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	sc, oldSC := obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass)
	allErrs := validateStorageClass(sc)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&sc.ObjectMeta, &oldSC.ObjectMeta, field.NewPath("metadata"))...)
	if sc.Provisioner != oldSC.Provisioner {
		allErrs = append(allErrs, requiredValue(field.NewPath("provisioner"), sc.Provisioner)...)
		allErrs = append(allErrs, immutable(field.NewPath("provisioner")))
	}
	if !equality.Semantic.DeepEqual(sc.Parameters, oldSC.Parameters) {
		allErrs = append(allErrs, immutable(field.NewPath("parameters")))
	}
	if !ptr.Equal(sc.ReclaimPolicy, oldSC.ReclaimPolicy) {
		allErrs = append(allErrs, immutable(field.NewPath("reclaimPolicy")))
	}
	if !ptr.Equal(sc.VolumeBindingMode, oldSC.VolumeBindingMode) {
		allErrs = append(allErrs, immutable(field.NewPath("volumeBindingMode")))
	}
	return allErrs
}

func (storageClassStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return storageClassWarnings(obj.(*storagev1.StorageClass))
}

var (
	supportedReclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain)
	supportedBindingModes    = sets.New(storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer)
)

// validateStorageClass is kube's handwritten validation of a class (its
// required provisioner is declarative, the caller's).
func validateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&sc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateProvisioner(sc.Provisioner, field.NewPath("provisioner"))...)
	allErrs = append(allErrs, validateParameters(sc.Parameters, true, field.NewPath("parameters"))...)
	if p := sc.ReclaimPolicy; p != nil && *p != "" && !supportedReclaimPolicies.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(field.NewPath("reclaimPolicy"), p, sets.List(supportedReclaimPolicies)))
	}
	switch m := sc.VolumeBindingMode; {
	case m == nil:
		allErrs = append(allErrs, field.Required(field.NewPath("volumeBindingMode"), ""))
	case !supportedBindingModes.Has(*m):
		allErrs = append(allErrs, field.NotSupported(field.NewPath("volumeBindingMode"), m, sets.List(supportedBindingModes)))
	}
	return append(allErrs, validateAllowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
}

// validateAllowedTopologies checks each term and refuses a term equal to
// an earlier one. As kube's, an empty term counts as a duplicate too.
func validateAllowedTopologies(terms []corev1.TopologySelectorTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	var seen []map[string]sets.Set[string]
	for i, term := range terms {
		exprs, errs := validateTopologySelectorTerm(term, fldPath.Index(i))
		allErrs = append(allErrs, errs...)
		duplicate := len(exprs) == 0
		for _, s := range seen {
			duplicate = duplicate || equality.Semantic.DeepEqual(exprs, s)
		}
		if duplicate {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i).Child("matchLabelExpressions"), ""))
		}
		seen = append(seen, exprs)
	}
	return allErrs
}

// validateTopologySelectorTerm returns the term as key -> values, and its
// errors: values required and unique, keys valid label names and unique.
func validateTopologySelectorTerm(term corev1.TopologySelectorTerm, fldPath *field.Path) (map[string]sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	exprs := map[string]sets.Set[string]{}
	for i, req := range term.MatchLabelExpressions {
		p := fldPath.Child("matchLabelExpressions").Index(i)
		values := sets.New[string]()
		if len(req.Values) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("values"), ""))
		}
		for j, v := range req.Values {
			if values.Has(v) {
				allErrs = append(allErrs, field.Duplicate(p.Child("values").Index(j), v))
			}
			values.Insert(v)
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelName(req.Key, p.Child("key"))...)
		if _, ok := exprs[req.Key]; ok {
			allErrs = append(allErrs, field.Duplicate(p.Child("key"), req.Key))
		}
		exprs[req.Key] = values
	}
	return exprs, allErrs
}

// storageClassWarnings names deprecated node labels in allowed topologies.
func storageClassWarnings(sc *storagev1.StorageClass) []string {
	var warnings []string
	for i, term := range sc.AllowedTopologies {
		for j, expr := range term.MatchLabelExpressions {
			if msg, ok := podspec.DeprecatedNodeLabel(expr.Key); ok {
				p := field.NewPath("allowedTopologies").Index(i).Child("matchLabelExpressions").Index(j).Child("key")
				warnings = append(warnings, fmt.Sprintf("%s: %s", p, msg))
			}
		}
	}
	return warnings
}

var storageClassDocs = storagev1.StorageClass{}.SwaggerDoc()

var storageClassColumns = []metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Provisioner", Type: "string", Description: storageClassDocs["provisioner"]},
	{Name: "ReclaimPolicy", Type: "string", Description: storageClassDocs["reclaimPolicy"]},
	{Name: "VolumeBindingMode", Type: "string", Description: storageClassDocs["volumeBindingMode"]},
	{Name: "AllowVolumeExpansion", Type: "string", Description: storageClassDocs["allowVolumeExpansion"]},
	generic.AgeColumn,
}

// storageClassTable prints classes as kube does; in a list, the name of
// the class claims get by default reads "NAME (default)".
type storageClassTable struct{}

func (storageClassTable) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	effectiveDefault := ""
	if list, ok := obj.(*storagev1.StorageClassList); ok {
		classes := make([]*storagev1.StorageClass, len(list.Items))
		for i := range list.Items {
			classes[i] = &list.Items[i]
		}
		if sc := DefaultClass(classes); sc != nil {
			effectiveDefault = sc.Name
		}
	} else if meta.IsListType(obj) {
		return nil, fmt.Errorf("not a list of storage classes: %T", obj)
	}
	printer := generic.TablePrinter{Columns: storageClassColumns, Cells: func(obj runtime.Object) ([]interface{}, error) {
		sc := obj.(*storagev1.StorageClass)
		name := sc.Name
		if name == effectiveDefault {
			name += " (default)"
		}
		reclaim, binding := corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingImmediate
		if sc.ReclaimPolicy != nil {
			reclaim = *sc.ReclaimPolicy
		}
		if sc.VolumeBindingMode != nil {
			binding = *sc.VolumeBindingMode
		}
		return []interface{}{name, sc.Provisioner, string(reclaim), string(binding), ptr.Deref(sc.AllowVolumeExpansion, false),
			generic.TranslateTimestampSince(sc.CreationTimestamp)}, nil
	}}
	return printer.ConvertToTable(ctx, obj, tableOptions)
}

var volumeAttributesClasses = generic.Resource{
	Name: "volumeattributesclasses", Singular: "volumeattributesclass", Kind: "VolumeAttributesClass",
	ShortNames: []string{"vac"},
	New:        generic.NewOf[storagev1.VolumeAttributesClass], NewList: generic.NewOf[storagev1.VolumeAttributesClassList],
	Strategy: volumeAttributesClassStrategy{},
	// kube returns the deleted object, not a Status.
	ReturnDeletedObject: true,
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
		func(c *storagev1.VolumeAttributesClass) interface{} { return c.DriverName }),
}

// VACProtectionFinalizer is what kube's StorageObjectInUseProtection
// admission plugin (admission.StorageObjectInUseProtection) adds to every
// new class; kube-controller-manager's vac-protection controller removes
// it once no volume or claim uses it.
const VACProtectionFinalizer = "kubernetes.io/vac-protection"

type volumeAttributesClassStrategy struct{ generic.BaseStrategy }

func (volumeAttributesClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateVolumeAttributesClass(obj.(*storagev1.VolumeAttributesClass))
}

// ValidateUpdate: a class's driver and parameters cannot change.
func (volumeAttributesClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*storagev1.VolumeAttributesClass), old.(*storagev1.VolumeAttributesClass)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))
	if c.DriverName != oldC.DriverName {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(c.Parameters, oldC.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(allErrs, validateVolumeAttributesClass(c)...)
}

func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, requiredValue(field.NewPath("driverName"), c.DriverName)...)
	allErrs = append(allErrs, validateProvisioner(c.DriverName, field.NewPath("driverName"))...)
	return append(allErrs, validateParameters(c.Parameters, false, field.NewPath("parameters"))...)
}
