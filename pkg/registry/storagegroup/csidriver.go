package storagegroup

import (
	"context"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var csiDriverDocs = storagev1.CSIDriverSpec{}.SwaggerDoc()

var csiDrivers = generic.Resource{
	Name: "csidrivers", Singular: "csidriver", Kind: "CSIDriver",
	New: generic.NewOf[storagev1.CSIDriver], NewList: generic.NewOf[storagev1.CSIDriverList],
	Strategy: csiDriverStrategy{},
	// kube returns the deleted object, not a Status.
	ReturnDeletedObject: true,
	Table: generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "AttachRequired", Type: "boolean", Description: csiDriverDocs["attachRequired"]},
			{Name: "PodInfoOnMount", Type: "boolean", Description: csiDriverDocs["podInfoOnMount"]},
			{Name: "StorageCapacity", Type: "boolean", Description: csiDriverDocs["storageCapacity"]},
			{Name: "TokenRequests", Type: "string", Description: csiDriverDocs["tokenRequests"]},
			{Name: "RequiresRepublish", Type: "boolean", Description: csiDriverDocs["requiresRepublish"]},
			{Name: "Modes", Type: "string", Description: csiDriverDocs["volumeLifecycleModes"]},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			d := obj.(*storagev1.CSIDriver)
			modes := make([]string, len(d.Spec.VolumeLifecycleModes))
			for i, m := range d.Spec.VolumeLifecycleModes {
				modes[i] = string(m)
			}
			tokenRequests := "<unset>"
			if d.Spec.TokenRequests != nil {
				audiences := make([]string, len(d.Spec.TokenRequests))
				for i, t := range d.Spec.TokenRequests {
					audiences[i] = t.Audience
				}
				tokenRequests = strings.Join(audiences, ",")
			}
			return []interface{}{d.Name, ptr.Deref(d.Spec.AttachRequired, true), ptr.Deref(d.Spec.PodInfoOnMount, false),
				ptr.Deref(d.Spec.StorageCapacity, false), tokenRequests, ptr.Deref(d.Spec.RequiresRepublish, false),
				orNone(strings.Join(modes, ",")), generic.TranslateTimestampSince(d.CreationTimestamp)}, nil
		},
	},
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// csiDriverStrategy is kube's: a driver is written by its installer, and
// every update must name the resourceVersion it read.
type csiDriverStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = csiDriverStrategy{}

func (csiDriverStrategy) AllowUnconditionalUpdate() bool { return false }

// Default implements rest.Defaulter with kube's defaults (the
// feature-gated ones are on in 1.37).
func (csiDriverStrategy) Default(obj runtime.Object) {
	s := &obj.(*storagev1.CSIDriver).Spec
	for _, b := range []struct {
		field **bool
		value bool
	}{
		{&s.AttachRequired, true}, {&s.PodInfoOnMount, false}, {&s.StorageCapacity, false},
		{&s.RequiresRepublish, false}, {&s.SELinuxMount, false}, {&s.PreventPodSchedulingIfMissing, false},
	} {
		if *b.field == nil {
			*b.field = ptr.To(b.value)
		}
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = append(s.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
	}
}

// PrepareForUpdate bumps the generation when the spec changes (kube sets
// none on create).
func (csiDriverStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.BumpGenerationOnSpecChange(obj, old)
}

func (csiDriverStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	d := obj.(*storagev1.CSIDriver)
	allErrs := corevalidation.ValidateObjectMeta(&d.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))...)
}

// ValidateUpdate: whether the driver needs attaching, and its lifecycle
// modes, are immutable (the first under kube's misspelt path).
func (csiDriverStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	d, oldD := obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&d.ObjectMeta, &oldD.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(d.Spec.AttachRequired, oldD.Spec.AttachRequired, field.NewPath("spec", "attachedRequired"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, oldD.Spec.VolumeLifecycleModes, field.NewPath("spec", "volumeLifecycleModes"))...)
}

const tokenInSecretsWarning = "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes"

func (csiDriverStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	s := obj.(*storagev1.CSIDriver).Spec
	if len(s.TokenRequests) > 0 && s.ServiceAccountTokenInSecrets == nil {
		return []string{tokenInSecretsWarning}
	}
	return nil
}

// WarningsOnUpdate warns only when the token requests changed.
func (csiDriverStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	s, oldS := obj.(*storagev1.CSIDriver).Spec, old.(*storagev1.CSIDriver).Spec
	if len(s.TokenRequests) > 0 && s.ServiceAccountTokenInSecrets == nil && !equality.Semantic.DeepEqual(s.TokenRequests, oldS.TokenRequests) {
		return []string{tokenInSecretsWarning}
	}
	return nil
}

var (
	supportedFSGroupPolicies = sets.New(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy)
	supportedLifecycleModes  = []string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}
)

// validateCSIDriverSpec is kube's, field by field in its order; the
// defaulted booleans are required.
func validateCSIDriverSpec(s *storagev1.CSIDriverSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	required := func(name string, set bool) {
		if !set {
			allErrs = append(allErrs, field.Required(fldPath.Child(name), ""))
		}
	}
	required("attachedRequired", s.AttachRequired != nil)
	required("podInfoOnMount", s.PodInfoOnMount != nil)
	required("storageCapacity", s.StorageCapacity != nil)
	if p := s.FSGroupPolicy; p != nil && !supportedFSGroupPolicies.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("fsGroupPolicy"), p, sets.List(supportedFSGroupPolicies)))
	}
	allErrs = append(allErrs, validateTokenRequests(s.TokenRequests, fldPath.Child("tokenRequests"))...)
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeLifecycleModes"), m, supportedLifecycleModes))
		}
	}
	required("seLinuxMount", s.SELinuxMount != nil)
	if p := s.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < 10 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if v := s.ServiceAccountTokenInSecrets; v != nil && len(s.TokenRequests) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccountTokenInSecrets"), v, "serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	required("preventPodSchedulingIfMissing", s.PreventPodSchedulingIfMissing != nil)
	return allErrs
}

// validateTokenRequests: audiences unique (one may be empty), lifetimes
// between 10 minutes and 2^32 seconds.
func validateTokenRequests(requests []storagev1.TokenRequest, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	audiences := sets.New[string]()
	for i, r := range requests {
		p := fldPath.Index(i)
		if audiences.Has(r.Audience) {
			allErrs = append(allErrs, field.Duplicate(p.Child("audience"), r.Audience))
			continue
		}
		audiences.Insert(r.Audience)
		if r.ExpirationSeconds == nil {
			continue
		}
		if s := *r.ExpirationSeconds; s < 600 {
			allErrs = append(allErrs, field.Invalid(p.Child("expirationSeconds"), s, "may not specify a duration less than 10 minutes"))
		} else if s > 1<<32 {
			allErrs = append(allErrs, field.Invalid(p.Child("expirationSeconds"), s, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return allErrs
}
