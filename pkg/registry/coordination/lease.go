// Package coordination serves the coordination.k8s.io group (v1): leases.
package coordination

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var leases = generic.Resource{
	Name: "leases", Singular: "lease", Kind: "Lease", Namespaced: true,
	New: generic.NewOf[coordinationv1.Lease], NewList: generic.NewOf[coordinationv1.LeaseList],
	Strategy: leaseStrategy{generic.BaseStrategy{Namespaced: true}},
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		func(l *coordinationv1.Lease) interface{} { return ptr.Deref(l.Spec.HolderIdentity, "") }),
}

// leaseStrategy is kube's: leases may be created by PUT (leader election
// does), but every update must name the resourceVersion it read, since a
// lease is a lock.
type leaseStrategy struct{ generic.BaseStrategy }

func (leaseStrategy) AllowCreateOnUpdate() bool      { return true }
func (leaseStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate drops the fields of coordinated leader election, a
// feature kube 1.37 leaves off by default.
func (leaseStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	l := obj.(*coordinationv1.Lease)
	l.Spec.Strategy = nil
	l.Spec.PreferredHolder = nil
}

// PrepareForUpdate keeps them only on leases that had them.
func (leaseStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	l, oldL := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	if oldL.Spec.Strategy == nil {
		l.Spec.Strategy = nil
	}
	if oldL.Spec.PreferredHolder == nil {
		l.Spec.PreferredHolder = nil
	}
}

func (leaseStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	l := obj.(*coordinationv1.Lease)
	allErrs := apivalidation.ValidateObjectMeta(&l.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}

func (leaseStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	l, oldL := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	allErrs := apivalidation.ValidateObjectMetaUpdate(&l.ObjectMeta, &oldL.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}

func validateLeaseSpec(spec *coordinationv1.LeaseSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseDurationSeconds"), d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("leaseTransitions"), t, "must be greater than or equal to 0"))
	}
	// strategy and preferredHolder never get here: the strategy drops them.
	return allErrs
}

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// Leases is the leases' store: the endpoint reconciler keeps this
	// replica's lease through it.
	Leases *generic.Store
}

// NewRESTStorageProvider returns the provider of coordination.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(coordinationv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{Leases: s[0]} }, leases)
}
