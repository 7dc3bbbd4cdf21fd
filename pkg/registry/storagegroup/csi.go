package storagegroup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
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
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "AttachRequired", Type: "boolean", Description: csiDriverDocs["attachRequired"]},
		{Name: "PodInfoOnMount", Type: "boolean", Description: csiDriverDocs["podInfoOnMount"]},
		{Name: "StorageCapacity", Type: "boolean", Description: csiDriverDocs["storageCapacity"]},
		{Name: "TokenRequests", Type: "string", Description: csiDriverDocs["tokenRequests"]},
		{Name: "RequiresRepublish", Type: "boolean", Description: csiDriverDocs["requiresRepublish"]},
		{Name: "Modes", Type: "string", Description: csiDriverDocs["volumeLifecycleModes"]},
		generic.AgeColumn,
	}, func(d *storagev1.CSIDriver) ([]interface{}, error) {
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
	}),
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

var csiNodes = generic.Resource{
	Name: "csinodes", Singular: "csinode", Kind: "CSINode",
	New: generic.NewOf[storagev1.CSINode], NewList: generic.NewOf[storagev1.CSINodeList],
	Strategy: csiNodeStrategy{},
	// kube returns the deleted object, not a Status.
	ReturnDeletedObject: true,
	// Only status changes on /status; with storage health gated off,
	// kube drops what a client sends there unless the node had some already.
	StatusStrategy: generic.StatusStrategy{Main: csiNodeStrategy{}, GroupVersion: "storage.k8s.io/v1", KeepMetadata: true,
		Prepare: dropStorageHealth, Validate: validateCSINodeStatusUpdate},
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
		func(n *storagev1.CSINode) interface{} { return int64(len(n.Spec.Drivers)) }),
}

// csiNodeStrategy is kube's: the kubelet registers drivers in the spec;
// a driver's entry cannot change but for its allocatable count. The
// status (storage health) is behind a gate kube 1.37 leaves off: nothing
// sets it.
type csiNodeStrategy struct{ generic.SpecStrategy }

func (csiNodeStrategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields implements rest.ResetFieldsStrategy.
func (csiNodeStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("storage.k8s.io/v1", "status")
}

func (csiNodeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateCSINode(obj.(*storagev1.CSINode))
}

func (csiNodeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, oldN := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
	allErrs := validateCSINode(n)
	for _, oldDriver := range oldN.Spec.Drivers {
		for _, driver := range n.Spec.Drivers {
			if driver.Name != oldDriver.Name {
				continue
			}
			d, oldD := driver.DeepCopy(), oldDriver.DeepCopy()
			d.Allocatable, oldD.Allocatable = nil, nil
			if !equality.Semantic.DeepEqual(d, oldD) {
				allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "drivers"), toInternalCSINodeDriver(d), apivalidation.FieldImmutableErrorMsg))
			}
		}
	}
	return allErrs
}

func validateCSINode(n *storagev1.CSINode) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&n.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	names := sets.New[string]()
	for i, d := range n.Spec.Drivers {
		p := field.NewPath("spec", "drivers").Index(i)
		allErrs = append(allErrs, validateDriverName(d.Name, p.Child("name"))...)
		switch {
		case d.NodeID == "":
			allErrs = append(allErrs, field.Required(p.Child("nodeID"), d.NodeID))
		case len(d.NodeID) > maxCSINodeIDLength:
			allErrs = append(allErrs, field.Invalid(p.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", maxCSINodeIDLength)))
		}
		if a := d.Allocatable; a != nil && a.Count != nil {
			allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*a.Count), p.Child("allocatable", "count"))...)
		}
		if names.Has(d.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		keys := sets.New[string]()
		for _, key := range d.TopologyKeys {
			if key == "" {
				allErrs = append(allErrs, field.Required(p, key))
			}
			if keys.Has(key) {
				allErrs = append(allErrs, field.Duplicate(p, key))
			}
			keys.Insert(key)
			allErrs = append(allErrs, validateQualifiedName(key, p)...)
		}
	}
	return allErrs
}

// validateDriverName is kube's handwritten check of a CSI driver's name:
// required, at most 63 bytes, a DNS subdomain once lower-cased.
func validateDriverName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if len(name) > maxCSIDriverNameLength {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxCSIDriverNameLength))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

// internalCSINodeDriver is how kube's message shows a changed driver: its
// internal type, marshalled without JSON names.
type internalCSINodeDriver struct {
	Name         string
	NodeID       string
	TopologyKeys []string
	Allocatable  *struct{ Count *int32 }
}

func toInternalCSINodeDriver(d *storagev1.CSINodeDriver) internalCSINodeDriver {
	out := internalCSINodeDriver{Name: d.Name, NodeID: d.NodeID, TopologyKeys: d.TopologyKeys}
	if d.Allocatable != nil {
		out.Allocatable = &struct{ Count *int32 }{d.Allocatable.Count}
	}
	return out
}

// dropStorageHealth drops the storage health a status write sends for a
// node that had none (the gate is off).
func dropStorageHealth(obj, old runtime.Object) {
	n, oldN := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
	if len(oldN.Status.StorageHealth) == 0 {
		n.Status.StorageHealth = nil
	}
}

// validateCSINodeStatusUpdate checks the metadata only (kube's).
func validateCSINodeStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, oldN := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
	return corevalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &oldN.ObjectMeta, field.NewPath("metadata"))
}

var csiStorageCapacities = generic.Resource{
	Name: "csistoragecapacities", Singular: "csistoragecapacity", Kind: "CSIStorageCapacity", Namespaced: true,
	New: generic.NewOf[storagev1.CSIStorageCapacity], NewList: generic.NewOf[storagev1.CSIStorageCapacityList],
	Strategy: csiStorageCapacityStrategy{generic.BaseStrategy{Namespaced: true}},
	// kube has no printer for capacities: its default table.
	Table: generic.DefaultTableConvertor(schema.GroupResource{Group: storagev1.GroupName, Resource: "csistoragecapacities"}),
}

// csiStorageCapacityStrategy is kube's: a driver's external provisioner
// publishes capacities per topology segment and class; both are what the
// capacity was measured for, so they cannot change.
type csiStorageCapacityStrategy struct{ generic.BaseStrategy }

func (csiStorageCapacityStrategy) AllowUnconditionalUpdate() bool { return false }

func (csiStorageCapacityStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateCSIStorageCapacity(obj.(*storagev1.CSIStorageCapacity), false)
}

// ValidateUpdate keeps accepting label values kube once let through in an
// existing object's selector.
func (csiStorageCapacityStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity)
	opts := metav1validation.LabelSelectorValidationOptions{}
	oldInvalid := len(metav1validation.ValidateLabelSelector(oldC.NodeTopology, opts, nil)) > 0
	allErrs := validateCSIStorageCapacity(c, oldInvalid)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))...)
	if !equality.Semantic.DeepEqual(c.NodeTopology, oldC.NodeTopology) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, apivalidation.FieldImmutableErrorMsg))
	}
	if c.StorageClassName != oldC.StorageClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, apivalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

func (csiStorageCapacityStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return nodeSelectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
}

func (csiStorageCapacityStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return nodeSelectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValues bool) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValues}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.NodeTopology, opts, field.NewPath("nodeTopology"))...)
	for _, msg := range apivalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), apivalidation.IsNegativeErrorMsg))
	}
	return allErrs
}

// nodeSelectorWarnings names deprecated node labels in a selector.
func nodeSelectorWarnings(selector *metav1.LabelSelector, fldPath *field.Path) []string {
	if selector == nil {
		return nil
	}
	var warnings []string
	for i, e := range selector.MatchExpressions {
		if msg, ok := podspec.DeprecatedNodeLabel(e.Key); ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s is %s", fldPath.Child("matchExpressions").Index(i).Child("key"), e.Key, msg))
		}
	}
	for _, label := range slices.Sorted(maps.Keys(selector.MatchLabels)) {
		if msg, ok := podspec.DeprecatedNodeLabel(label); ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s", fldPath.Child("matchLabels").Child(label), msg))
		}
	}
	return warnings
}
