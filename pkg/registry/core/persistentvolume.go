package core

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/pvspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var persistentVolumes = generic.Resource{
	Name: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume",
	ShortNames: []string{"pv"},
	New:        generic.NewOf[corev1.PersistentVolume],
	NewList:    generic.NewOf[corev1.PersistentVolumeList],
	Strategy:   persistentVolumeStrategy{WarningStrategy: generic.NewWarningStrategy(false, persistentVolumeWarnings)},
	// persistentvolumes/status: a phase change records when it happened;
	// writes of status only are not warned about.
	StatusStrategy: generic.StatusStrategy{Main: persistentVolumeStrategy{WarningStrategy: generic.NewWarningStrategy(false, persistentVolumeWarnings)}, GroupVersion: "v1", Prepare: stampPhaseTransition,
		Validate: validatePersistentVolumeStatusUpdate},
	Table: persistentVolumeTable,
	// kube returns the deleted volume, not a Status.
	ReturnDeletedObject: true,
}

type persistentVolumeStrategy struct {
	generic.WarningStrategy[*corev1.PersistentVolume]
	resetsStatus
}

// Default is kube's: reclaim policy Retain, volume mode Filesystem,
// capacity rounded up to milli precision, and the defaults of the volume
// sources that have some.
func (persistentVolumeStrategy) Default(obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		pv.Spec.VolumeMode = &mode
	}
	corevalidation.DefaultResourceList(pv.Spec.Capacity)
	pvspec.DefaultSource(&pv.Spec.PersistentVolumeSource)
}

// PrepareForCreate: a new volume is Pending, whatever status was sent.
func (persistentVolumeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	now := metav1.Now()
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
}

func (persistentVolumeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
}

func (persistentVolumeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validatePersistentVolume(obj.(*corev1.PersistentVolume))
}

func (persistentVolumeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pv, oldPV := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	allErrs := validatePersistentVolume(pv)
	newSource := pv.Spec.PersistentVolumeSource
	// A CSI volume may gain a controllerExpandSecretRef.
	if oldPV.Spec.CSI != nil && oldPV.Spec.CSI.ControllerExpandSecretRef == nil && newSource.CSI != nil && newSource.CSI.ControllerExpandSecretRef != nil {
		newSource = *newSource.DeepCopy()
		newSource.CSI.ControllerExpandSecretRef = nil
	}
	if !apiequality.Semantic.DeepEqual(newSource, oldPV.Spec.PersistentVolumeSource) {
		d := corevalidation.InternalDiff(oldPV.Spec.PersistentVolumeSource, newSource)
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", d)))
	}
	return append(allErrs, apivalidation.ValidateImmutableField(pv.Spec.VolumeMode, oldPV.Spec.VolumeMode, field.NewPath("volumeMode"))...)
}

// stampPhaseTransition records when a status write changed the phase
// (keeping the time it had otherwise), unless the writer set a new one.
func stampPhaseTransition(obj, old runtime.Object) {
	pv, oldPV := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	switch {
	case oldPV.Status.Phase == pv.Status.Phase && pv.Status.LastPhaseTransitionTime == nil:
		pv.Status.LastPhaseTransitionTime = oldPV.Status.LastPhaseTransitionTime
	case oldPV.Status.Phase != pv.Status.Phase &&
		(pv.Status.LastPhaseTransitionTime == nil || pv.Status.LastPhaseTransitionTime.Equal(oldPV.Status.LastPhaseTransitionTime)):
		now := metav1.Now()
		pv.Status.LastPhaseTransitionTime = &now
	}
}

// validatePersistentVolumeStatusUpdate checks the metadata only (kube's).
func validatePersistentVolumeStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pv, oldPV := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	return corevalidation.ValidateObjectMetaUpdate(&pv.ObjectMeta, &oldPV.ObjectMeta, field.NewPath("metadata"))
}

var (
	supportedReclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle,
		corev1.PersistentVolumeReclaimRetain)
	supportedVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
)

func validatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&pv.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec, fldPath := &pv.Spec, field.NewPath("spec")
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), ""))
	}
	allErrs = append(allErrs, pvspec.ValidateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))...)
	if len(spec.Capacity) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("capacity"), ""))
	}
	if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("capacity"), spec.Capacity, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for r, q := range spec.Capacity {
		p := fldPath.Child("capacity").Key(string(r))
		if q.Value() < 0 {
			allErrs = append(allErrs, field.Invalid(p, q.Value(), "must be a valid resource quantity"))
		}
		allErrs = append(allErrs, corevalidation.ValidatePositiveQuantityValue(q, p)...)
	}
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && !supportedReclaimPolicies.Has(p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("persistentVolumeReclaimPolicy"), p, sets.List(supportedReclaimPolicies)))
	}
	allErrs = append(allErrs, pvspec.ValidateSource(spec, fldPath)...)
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if spec.StorageClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.StorageClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("storageClassName"), spec.StorageClassName, msg))
		}
	}
	if spec.VolumeMode != nil && !supportedVolumeModes.Has(*spec.VolumeMode) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *spec.VolumeMode, sets.List(supportedVolumeModes)))
	}
	if spec.VolumeAttributesClassName != nil {
		if *spec.VolumeAttributesClassName == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.VolumeAttributesClassName, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("volumeAttributesClassName"), *spec.VolumeAttributesClassName, msg))
			}
		}
		if spec.CSI == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return allErrs
}

var (
	pvSpecDocs   = corev1.PersistentVolumeSpec{}.SwaggerDoc()
	pvStatusDocs = corev1.PersistentVolumeStatus{}.SwaggerDoc()
)

var persistentVolumeTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Capacity", Type: "string", Description: pvSpecDocs["capacity"]},
	{Name: "Access Modes", Type: "string", Description: pvSpecDocs["accessModes"]},
	{Name: "Reclaim Policy", Type: "string", Description: pvSpecDocs["persistentVolumeReclaimPolicy"]},
	{Name: "Status", Type: "string", Description: pvStatusDocs["phase"]},
	{Name: "Claim", Type: "string", Description: pvSpecDocs["claimRef"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
	{Name: "Reason", Type: "string", Description: pvStatusDocs["reason"]},
	generic.AgeColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: pvSpecDocs["volumeMode"]},
}, func(pv *corev1.PersistentVolume) ([]interface{}, error) {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	return []interface{}{pv.Name, size.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		tablePhase(string(pv.Status.Phase), pv.DeletionTimestamp), claim,
		tableStorageClass(pv.Annotations, pv.Spec.StorageClassName), unsetOr(pv.Spec.VolumeAttributesClassName), pv.Status.Reason,
		generic.TranslateTimestampSince(pv.CreationTimestamp), volumeModeString(pv.Spec.VolumeMode)}, nil
})

// accessModesString is kube's short form: RWO,ROX,RWX,RWOP.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

func volumeModeString(mode *corev1.PersistentVolumeMode) string {
	if mode == nil {
		return "<unset>"
	}
	return string(*mode)
}

// tablePhase is the phase a volume's or claim's table shows: Terminating
// once it is being deleted.
func tablePhase(phase string, deleting *metav1.Time) string {
	if deleting != nil {
		return "Terminating"
	}
	return phase
}

// tableStorageClass is the class a volume's or claim's table shows: the
// beta annotation, when set, over the spec's.
func tableStorageClass(annotations map[string]string, class string) string {
	if c, ok := annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return class
}

func unsetOr(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

// persistentVolumeWarnings flags deprecated annotations, policies, node
// labels and volume plugins (kube's GetWarningsForPersistentVolume), on
// every write of the main resource.
func persistentVolumeWarnings(pv *corev1.PersistentVolume) []string {
	w := podspec.StorageClassAnnotationWarnings(pv.Annotations)
	spec := field.NewPath("spec")
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		w = append(w, fmt.Sprintf("%s: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.", spec.Child("persistentVolumeReclaimPolicy")))
	}
	if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
		for i := range a.Required.NodeSelectorTerms {
			w = append(w, podspec.NodeSelectorTermWarnings(&a.Required.NodeSelectorTerms[i], spec.Child("nodeAffinity", "required", "nodeSelectorTerms").Index(i))...)
		}
	}
	return append(w, podspec.PersistentVolumeSourceWarnings(&pv.Spec.PersistentVolumeSource, spec)...)
}
