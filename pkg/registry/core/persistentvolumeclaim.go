package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/pvspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// newPersistentVolumeClaims declares the claims; storageClass, when set,
// is kube's DefaultStorageClass admission, run on new claims.
func newPersistentVolumeClaims(storageClass ClaimAdmitter) generic.Resource {
	r := generic.Resource{
		Name: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", Namespaced: true,
		ShortNames: []string{"pvc"},
		New:        generic.NewOf[corev1.PersistentVolumeClaim],
		NewList:    generic.NewOf[corev1.PersistentVolumeClaimList],
		Strategy:   persistentVolumeClaimStrategy{WarningStrategy: generic.NewWarningStrategy(true, persistentVolumeClaimWarnings)},
		// Writes of status only are not warned about.
		StatusStrategy: generic.StatusStrategy{Main: persistentVolumeClaimStrategy{WarningStrategy: generic.NewWarningStrategy(true, persistentVolumeClaimWarnings)},
			GroupVersion: "v1", Validate: validatePersistentVolumeClaimStatusUpdate},
		Table: persistentVolumeClaimTable,
		// kube returns the deleted claim, not a Status.
		ReturnDeletedObject: true,
	}
	if storageClass != nil {
		r.Hooks.BeginCreate = func(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (generic.FinishFunc, error) {
			pvc := obj.(*corev1.PersistentVolumeClaim)
			if err := storageClass.Admit(ctx, pvc, generic.RequestedName(pvc)); err != nil {
				return nil, err
			}
			return func(context.Context, bool) {}, nil
		}
	}
	return r
}

// ClaimAdmitter is a step of kube's admission of new claims that reads the
// objects of another API group: DefaultStorageClass (storage classes).
// name is the claim's name as kube's admission sees it
// (generic.RequestedName); an error is kube's Status.
type ClaimAdmitter interface {
	Admit(ctx context.Context, pvc *corev1.PersistentVolumeClaim, name string) error
}

type persistentVolumeClaimStrategy struct {
	generic.WarningStrategy[*corev1.PersistentVolumeClaim]
	resetsStatus
}

// Default: volume mode Filesystem, quantities rounded to milli precision.
func (persistentVolumeClaimStrategy) Default(obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	if pvc.Spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		pvc.Spec.VolumeMode = &mode
	}
	corevalidation.DefaultResourceList(pvc.Spec.Resources.Limits)
	corevalidation.DefaultResourceList(pvc.Spec.Resources.Requests)
	corevalidation.DefaultResourceList(pvc.Status.Capacity)
	corevalidation.DefaultResourceList(pvc.Status.AllocatedResources)
}

// PrepareForCreate: a new claim is Pending (kube clears the status, and
// its defaulting on read says Pending).
func (persistentVolumeClaimStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	dropLegacyDataSource(&pvc.Spec, nil)
	normalizeDataSources(&pvc.Spec)
}

func (persistentVolumeClaimStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	generic.KeepStatus(obj, old)
	dropLegacyDataSource(&pvc.Spec, &old.(*corev1.PersistentVolumeClaim).Spec)
	normalizeDataSources(&pvc.Spec)
}

// dropLegacyDataSource: kube silently drops a dataSource (without
// dataSourceRef) that is neither a claim nor a volume snapshot, unless the
// claim already had a data source.
func dropLegacyDataSource(spec, old *corev1.PersistentVolumeClaimSpec) {
	if old != nil && (old.DataSource != nil || old.DataSourceRef != nil) {
		return
	}
	if spec.DataSourceRef != nil || spec.DataSource == nil {
		return
	}
	ds := spec.DataSource
	group := ""
	if ds.APIGroup != nil {
		group = *ds.APIGroup
	}
	isClaim := group == "" && ds.Kind == "PersistentVolumeClaim"
	isSnapshot := group == "snapshot.storage.k8s.io" && ds.Kind == "VolumeSnapshot"
	if !isClaim && !isSnapshot {
		spec.DataSource = nil
	}
}

// normalizeDataSources keeps dataSource and dataSourceRef in step, as
// kube does: either one set alone fills the other (a dataSourceRef naming
// another namespace excepted).
func normalizeDataSources(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.DataSource != nil && spec.DataSourceRef == nil {
		spec.DataSourceRef = &corev1.TypedObjectReference{
			APIGroup: spec.DataSource.APIGroup, Kind: spec.DataSource.Kind, Name: spec.DataSource.Name,
		}
	}
	if spec.DataSourceRef != nil && spec.DataSource == nil && (spec.DataSourceRef.Namespace == nil || *spec.DataSourceRef.Namespace == "") {
		spec.DataSource = &corev1.TypedLocalObjectReference{
			APIGroup: spec.DataSourceRef.APIGroup, Kind: spec.DataSourceRef.Kind, Name: spec.DataSourceRef.Name,
		}
	}
}

func (persistentVolumeClaimStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validatePersistentVolumeClaim(obj.(*corev1.PersistentVolumeClaim))
}

func (persistentVolumeClaimStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validatePersistentVolumeClaimUpdate(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
}

// validatePersistentVolumeClaimStatusUpdate checks a
// persistentvolumeclaims/status write: metadata, access modes, capacity.
func validatePersistentVolumeClaimStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pvc, oldPVC := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pvc.ObjectMeta, &oldPVC.ObjectMeta, field.NewPath("metadata"))
	if len(pvc.Spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	for r, q := range pvc.Status.Capacity {
		if q.Value() < 0 {
			allErrs = append(allErrs, field.Invalid(field.NewPath("status", "capacity").Key(string(r)), q.Value(), "must be a valid resource quantity"))
		}
	}
	return allErrs
}

func validatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&pvc.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validatePersistentVolumeClaimSpec(&pvc.Spec, field.NewPath("spec"))...)
}

func validatePersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	allErrs = append(allErrs, pvspec.ValidateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))...)
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if storage, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if errs := corevalidation.ValidatePositiveQuantityValue(storage, storagePath); len(errs) > 0 {
		allErrs = append(allErrs, errs...)
	} else {
		allErrs = append(allErrs, corevalidation.ValidateResourceQuantityValue(corev1.ResourceStorage, storage, storagePath)...)
	}
	if spec.StorageClassName != nil && *spec.StorageClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("storageClassName"), *spec.StorageClassName, msg))
		}
	}
	if spec.VolumeMode != nil && !supportedVolumeModes.Has(*spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *spec.VolumeMode, sets.List(supportedVolumeModes)))
	}
	if spec.DataSource != nil {
		if spec.DataSource.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("dataSource", "name"), ""))
		}
		if spec.DataSource.Kind == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("dataSource", "kind"), ""))
		}
	}
	if spec.VolumeAttributesClassName != nil && *spec.VolumeAttributesClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.VolumeAttributesClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("volumeAttributesClassName"), *spec.VolumeAttributesClassName, msg))
		}
	}
	return allErrs
}

// validatePersistentVolumeClaimUpdate: the spec is fixed once created,
// except volumeName (set once, when bound), the storage request (which may
// grow) and, for bound claims, volumeAttributesClassName.
func validatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pvc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validatePersistentVolumeClaim(pvc)...)
	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	allErrs = append(allErrs, validateImmutableAnnotation(pvc.Annotations[corev1.BetaStorageClassAnnotation],
		old.Annotations[corev1.BetaStorageClassAnnotation], corev1.BetaStorageClassAnnotation, field.NewPath("metadata"))...)
	if pvc.Status.Phase == corev1.ClaimBound {
		if newSpec.Resources.Requests != nil {
			newSpec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !apiequality.Semantic.DeepEqual(newSpec, oldSpec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
			"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", corevalidation.InternalDiff(*oldSpec, *newSpec))))
	}
	oldSize, newSize := old.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	statusSize := old.Status.Capacity[corev1.ResourceStorage]
	// kube lets a failed expansion be walked back, down to the size the
	// volume actually has.
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	return append(allErrs, apivalidation.ValidateImmutableField(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
}

func validateImmutableAnnotation(newVal, oldVal, annotation string, fldPath *field.Path) field.ErrorList {
	if oldVal != newVal {
		return field.ErrorList{field.Invalid(fldPath.Child("annotations", annotation), newVal, apivalidation.FieldImmutableErrorMsg)}
	}
	return nil
}

var (
	pvcSpecDocs   = corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()
	pvcStatusDocs = corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
)

var persistentVolumeClaimTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Status", Type: "string", Description: pvcStatusDocs["phase"]},
	{Name: "Volume", Type: "string", Description: pvcSpecDocs["volumeName"]},
	{Name: "Capacity", Type: "string", Description: pvcStatusDocs["capacity"]},
	{Name: "Access Modes", Type: "string", Description: pvcStatusDocs["accessModes"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
	generic.AgeColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: pvcSpecDocs["volumeMode"]},
}, func(pvc *corev1.PersistentVolumeClaim) ([]interface{}, error) {
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModesString(pvc.Status.AccessModes)
		size := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = size.String()
	}
	return []interface{}{pvc.Name, tablePhase(string(pvc.Status.Phase), pvc.DeletionTimestamp), pvc.Spec.VolumeName, capacity, modes,
		tableStorageClass(pvc.Annotations, ptr.Deref(pvc.Spec.StorageClassName, "")), unsetOr(pvc.Spec.VolumeAttributesClassName),
		generic.TranslateTimestampSince(pvc.CreationTimestamp), volumeModeString(pvc.Spec.VolumeMode)}, nil
})

// persistentVolumeClaimWarnings flags the beta storage class annotation
// and fractional sizes (kube's GetWarningsForPersistentVolumeClaim), on
// every write of the main resource.
func persistentVolumeClaimWarnings(pvc *corev1.PersistentVolumeClaim) []string {
	w := podspec.StorageClassAnnotationWarnings(pvc.Annotations)
	return append(w, podspec.PVCSpecWarnings(field.NewPath("spec"), &pvc.Spec)...)
}
