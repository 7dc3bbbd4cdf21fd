package storagegroup

import (
	"context"
	"fmt"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

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
