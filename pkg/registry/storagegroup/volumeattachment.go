package storagegroup

import (
	"context"
	"math"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/pvspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var volumeAttachments = generic.Resource{
	Name: "volumeattachments", Singular: "volumeattachment", Kind: "VolumeAttachment",
	New: generic.NewOf[storagev1.VolumeAttachment], NewList: generic.NewOf[storagev1.VolumeAttachmentList],
	Strategy: volumeAttachmentStrategy{},
	// kube returns the deleted object, not a Status.
	ReturnDeletedObject: true,
	// Only status changes on /status, validated as a whole object (as
	// kube does).
	StatusStrategy: generic.StatusStrategy{Main: volumeAttachmentStrategy{}, GroupVersion: "storage.k8s.io/v1", KeepMetadata: true,
		Validate: volumeAttachmentStrategy{}.ValidateUpdate},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
		{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
		{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
		generic.AgeColumn,
	}, func(va *storagev1.VolumeAttachment) ([]interface{}, error) {
		pv := ""
		if va.Spec.Source.PersistentVolumeName != nil {
			pv = *va.Spec.Source.PersistentVolumeName
		}
		return []interface{}{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached,
			generic.TranslateTimestampSince(va.CreationTimestamp)}, nil
	}),
}

// volumeAttachmentStrategy is kube's: the attach/detach controller asks
// for a volume on a node (the spec, immutable); the driver's attacher
// answers in the status.
type volumeAttachmentStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = volumeAttachmentStrategy{}

func (volumeAttachmentStrategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields implements rest.ResetFieldsStrategy.
func (volumeAttachmentStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("storage.k8s.io/v1", "status")
}

// Default implements rest.Defaulter: an inline volume spec gets the
// defaults of its source.
func (volumeAttachmentStrategy) Default(obj runtime.Object) {
	if spec := obj.(*storagev1.VolumeAttachment).Spec.Source.InlineVolumeSpec; spec != nil {
		pvspec.DefaultInline(spec)
	}
}

func (volumeAttachmentStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
}

func (volumeAttachmentStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
}

// Validate: the attacher's rules are declarative in kube 1.37, so their
// errors come last.
func (volumeAttachmentStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	va := obj.(*storagev1.VolumeAttachment)
	allErrs := validateVolumeAttachment(va, false)
	return append(allErrs, validateCSIDriverName(va.Spec.Attacher, field.NewPath("spec", "attacher"))...)
}

// ValidateUpdate: the spec is immutable. When it changed, kube's
// declarative rules stop at saying so, and the handwritten checks of the
// attacher stand.
func (volumeAttachmentStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	va, oldVA := obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment)
	allErrs := validateVolumeAttachment(va, true)
	if !equality.Semantic.DeepEqual(va.Spec, oldVA.Spec) {
		allErrs = append(allErrs, immutable(field.NewPath("spec")))
	}
	return allErrs
}

// validateVolumeAttachment is kube's handwritten validation, with the
// attacher's checks when withAttacher.
func validateVolumeAttachment(va *storagev1.VolumeAttachment, withAttacher bool) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&va.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	if withAttacher {
		allErrs = append(allErrs, validateDriverName(va.Spec.Attacher, specPath.Child("attacher"))...)
	}
	allErrs = append(allErrs, validateAttachmentSource(&va.Spec.Source, specPath.Child("source"))...)
	for _, msg := range apivalidation.NameIsDNSSubdomain(va.Spec.NodeName, false) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("nodeName"), va.Spec.NodeName, msg))
	}
	allErrs = append(allErrs, validateAttachmentStatus(&va.Status, field.NewPath("status"))...)
	if name := va.Spec.Source.PersistentVolumeName; name != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*name, false) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec.source.persistentVolumeName"), *name, msg))
		}
	}
	return allErrs
}

const oneSource = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"

func validateAttachmentSource(src *storagev1.VolumeAttachmentSource, fldPath *field.Path) field.ErrorList {
	switch {
	case src.InlineVolumeSpec == nil && src.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(fldPath, oneSource)}
	case src.InlineVolumeSpec != nil && src.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(fldPath, oneSource)}
	case src.PersistentVolumeName != nil:
		if *src.PersistentVolumeName == "" {
			return field.ErrorList{field.Required(fldPath.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
		}
		return nil
	default:
		return pvspec.ValidateInline(src.InlineVolumeSpec, fldPath.Child("inlineVolumeSpec"))
	}
}

func validateAttachmentStatus(s *storagev1.VolumeAttachmentStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	size := 0
	for k, v := range s.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachMetadataSize {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("attachmentMetadata"), "", maxAttachMetadataSize))
	}
	allErrs = append(allErrs, validateVolumeError(s.AttachError, fldPath.Child("attachError"))...)
	return append(allErrs, validateVolumeError(s.DetachError, fldPath.Child("detachError"))...)
}

func validateVolumeError(e *storagev1.VolumeError, fldPath *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessage {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("message"), "", maxVolumeErrorMessage))
	}
	if e.ErrorCode != nil && *e.ErrorCode < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("errorCode"), *e.ErrorCode, validation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return allErrs
}
