package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

func newResourceClaims(admin adminAccess) generic.Resource {
	strategy := claimStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}, admin: admin}
	return generic.Resource{
		Name: "resourceclaims", Singular: "resourceclaim", Kind: "ResourceClaim", Namespaced: true,
		New: generic.NewOf[resourcev1.ResourceClaim], NewList: generic.NewOf[resourcev1.ResourceClaimList],
		Strategy: strategy,
		// resourceclaims/status: the allocation (set once), the consumers
		// it is reserved for, and the drivers' device status.
		StatusStrategy: generic.StatusStrategy{Main: strategy, GroupVersion: "resource.k8s.io/v1", KeepMetadata: true,
			Prepare: prepareClaimStatus, Validate: strategy.validateStatusUpdate},
		ReturnDeletedObject: true,
		Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
			func(c *resourcev1.ResourceClaim) interface{} { return claimState(c) }),
	}
}

// claimState is kube's summary: deleted, pending, allocated, reserved.
func claimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	case c.DeletionTimestamp == nil:
		states = append(states, "pending")
	}
	return strings.Join(states, ",")
}

// claimStrategy: a claim's spec never changes (the scheduler allocates
// what it asked for); its status belongs to resourceclaims/status. Kube
// keeps no generation for claims.
type claimStrategy struct {
	generic.BaseStrategy
	admin adminAccess
}

func (claimStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("resource.k8s.io/v1", "status")
}

func (claimStrategy) Default(obj runtime.Object) {
	c := obj.(*resourcev1.ResourceClaim)
	defaultDeviceClaim(&c.Spec.Devices)
	defaultAllocation(c.Status.Allocation)
}

func (claimStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
	dropDisabledClaimFields(&obj.(*resourcev1.ResourceClaim).Spec, nil)
}

func (claimStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
	dropDisabledClaimFields(&obj.(*resourcev1.ResourceClaim).Spec, &old.(*resourcev1.ResourceClaim).Spec)
}

func (s claimStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	c := obj.(*resourcev1.ResourceClaim)
	allErrs := s.admin.checkRequests(ctx, c.Namespace, c.Spec.Devices.Requests)
	allErrs = append(allErrs, corevalidation.ValidateObjectMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	return declarativeLast(append(allErrs, validateClaimSpec(&c.Spec, field.NewPath("spec"))...))
}

func (claimStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	allErrs := corevalidation.ValidateObjectMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))...)
	// Only the immutability is checked: nothing else can be changed.
	return declarativeLast(append(allErrs, immutableSpec(&c.Spec, &oldC.Spec, field.NewPath("spec"))...))
}

// immutableSpec is kube's declarative "field is immutable".
func immutableSpec(spec, old any, fldPath *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(spec, old) {
		return nil
	}
	return declarative(field.ErrorList{field.Invalid(fldPath, nil, "field is immutable").WithOrigin("immutable")})
}

// prepareClaimStatus drops from a status write what is gated off and the
// status of devices no longer allocated.
func prepareClaimStatus(obj, old runtime.Object) {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	dropDisabledAllocationFields(&c.Status, &oldC.Status)
	dropDeallocatedDevices(&c.Status, &oldC.Status)
}

// dropDeallocatedDevices drops the device status of devices the claim no
// longer has allocated, so that drivers need not clean up after a
// deallocation.
func dropDeallocatedDevices(status, old *resourcev1.ResourceClaimStatus) {
	gone := sets.New[deviceID]()
	if old.Allocation != nil {
		for _, r := range old.Allocation.Devices.Results {
			gone.Insert(resultID(r))
		}
	}
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			gone.Delete(resultID(r))
		}
	}
	kept := status.Devices[:0]
	for _, d := range status.Devices {
		if !gone.Has(statusID(d)) {
			kept = append(kept, d)
		}
	}
	status.Devices = kept
	if len(status.Devices) == 0 {
		status.Devices = nil
	}
}

// validateStatusUpdate checks a resourceclaims/status write, with the
// admin access check first.
func (s claimStrategy) validateStatusUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	allErrs := s.admin.checkStatus(ctx, c.Namespace, c.Status.Allocation, oldC.Status.Allocation)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))...)
	return declarativeLast(append(allErrs, validateClaimStatusUpdate(c, oldC)...))
}

func newResourceClaimTemplates(admin adminAccess) generic.Resource {
	return generic.Resource{
		Name: "resourceclaimtemplates", Singular: "resourceclaimtemplate", Kind: "ResourceClaimTemplate", Namespaced: true,
		New: generic.NewOf[resourcev1.ResourceClaimTemplate], NewList: generic.NewOf[resourcev1.ResourceClaimTemplateList],
		Strategy:            claimTemplateStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}, admin: admin},
		ReturnDeletedObject: true,
		Table:               generic.NameAgeTable,
	}
}

// claimTemplateStrategy: the claims made from a template (one per pod)
// are as it says; its spec never changes.
type claimTemplateStrategy struct {
	generic.BaseStrategy
	admin adminAccess
}

func (claimTemplateStrategy) Default(obj runtime.Object) {
	defaultDeviceClaim(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec.Devices)
}

func (claimTemplateStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	dropDisabledClaimFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, nil)
}

func (claimTemplateStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	dropDisabledClaimFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, &old.(*resourcev1.ResourceClaimTemplate).Spec.Spec)
}

func (s claimTemplateStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	t := obj.(*resourcev1.ResourceClaimTemplate)
	allErrs := s.admin.checkRequests(ctx, t.Namespace, t.Spec.Spec.Devices.Requests)
	return declarativeLast(append(allErrs, validateClaimTemplate(t)...))
}

func validateClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&t.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateTemplateMeta(&t.Spec.ObjectMeta, spec.Child("metadata"))...)
	return append(allErrs, validateClaimSpec(&t.Spec.Spec, spec.Child("spec"))...)
}

// validateTemplateMeta: the metadata of the claims made from a template
// may have labels and annotations, nothing else.
func validateTemplateMeta(m *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateAnnotations(m.Annotations, fldPath.Child("annotations"))
	allErrs = append(allErrs, metav1validation.ValidateLabels(m.Labels, fldPath.Child("labels"))...)
	// Every other field, by reflection, so that a field ObjectMeta gains
	// is refused too.
	v := reflect.ValueOf(*m)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" || v.Field(i).IsZero() {
			continue
		}
		allErrs = append(allErrs, field.Forbidden(fldPath.Child(strings.ToLower(f.Name[:1])+f.Name[1:]), "cannot be set"))
	}
	return allErrs
}

// ValidateUpdate is kube's: the template is checked as new, then its spec
// must not have changed.
func (claimTemplateStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	t, oldT := obj.(*resourcev1.ResourceClaimTemplate), old.(*resourcev1.ResourceClaimTemplate)
	allErrs := validateClaimTemplate(t)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&t.ObjectMeta, &oldT.ObjectMeta, field.NewPath("metadata"))...)
	if !apiequality.Semantic.DeepEqual(t.Spec, oldT.Spec) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), internalTemplateSpec(t.Spec), "field is immutable"))
	}
	return declarativeLast(allErrs)
}

// internalTemplateSpec shows a template's spec as kube's immutability
// error does: its internal type, whose embedded ObjectMeta (JSON-tagged)
// is inlined and whose claim spec has no JSON tags.
type internalTemplateSpec resourcev1.ResourceClaimTemplateSpec

func (s internalTemplateSpec) MarshalJSON() ([]byte, error) {
	meta, err := json.Marshal(s.ObjectMeta)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(corevalidation.InternalValue(s.Spec))
	if err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(meta, []byte("}"))
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"Spec":`...)
	out = append(out, spec...)
	return append(out, '}'), nil
}
