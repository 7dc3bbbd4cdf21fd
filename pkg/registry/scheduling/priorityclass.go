// Package scheduling serves the scheduling.k8s.io group (v1): priority
// classes, with kube's system classes (SystemPriorityClasses, created at
// start by cmd) and its refusal to delete them one by one.
package scheduling

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var priorityClassDocs = schedulingv1.PriorityClass{}.SwaggerDoc()

var priorityClasses = generic.Resource{
	Name: "priorityclasses", Singular: "priorityclass", Kind: "PriorityClass",
	ShortNames: []string{"pc"},
	New:        generic.NewOf[schedulingv1.PriorityClass], NewList: generic.NewOf[schedulingv1.PriorityClassList],
	Strategy: priorityClassStrategy{},
	// The system classes cannot be deleted by name.
	Serve: func(store *generic.Store) rest.Storage { return &priorityClassREST{Store: store} },
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Value", Type: "integer", Description: priorityClassDocs["value"]},
		{Name: "Global-Default", Type: "boolean", Description: priorityClassDocs["globalDefault"]},
		generic.AgeColumn,
		{Name: "PreemptionPolicy", Type: "string", Description: priorityClassDocs["preemptionPolicy"]},
	}, func(pc *schedulingv1.PriorityClass) ([]interface{}, error) {
		return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, generic.TranslateTimestampSince(pc.CreationTimestamp),
			string(ptr.Deref(pc.PreemptionPolicy, ""))}, nil
	}),
}

// Priorities with a meaning of their own in kube.
const (
	// HighestUserDefinablePriority is the highest value a class not
	// named "system-..." may have.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is the base of the system classes' values.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	// systemPrefix starts the names reserved for the system classes.
	systemPrefix = "system-"
)

// SystemPriorityClasses returns the classes kube-apiserver creates at
// start, with kube's content: system-node-critical, then
// system-cluster-critical.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{
			ObjectMeta:  metav1.ObjectMeta{Name: "system-node-critical"},
			Value:       SystemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node.",
		},
		{
			ObjectMeta:  metav1.ObjectMeta{Name: "system-cluster-critical"},
			Value:       SystemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
		},
	}
}

// checkSystemClass reports why a class named "system-..." is not one of
// kube's system classes as they are (nil when it is).
func checkSystemClass(name string, value int32, globalDefault bool) error {
	for _, sc := range SystemPriorityClasses() {
		if sc.Name != name {
			continue
		}
		if sc.Value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", sc.Name, sc.Value)
		}
		if sc.GlobalDefault != globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", sc.Name, sc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

type priorityClassStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = priorityClassStrategy{}

// Default implements rest.Defaulter: pods of the class may preempt lower
// ones.
func (priorityClassStrategy) Default(obj runtime.Object) {
	pc := obj.(*schedulingv1.PriorityClass)
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	}
}

func (priorityClassStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
}

// Validate reserves the "system-" names for kube's classes as they are,
// and caps the value of the others.
func (priorityClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	pc := obj.(*schedulingv1.PriorityClass)
	allErrs := corevalidation.ValidateObjectMeta(&pc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if strings.HasPrefix(pc.Name, systemPrefix) {
		if err := checkSystemClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if p := pc.PreemptionPolicy; p != nil {
		allErrs = append(allErrs, validatePreemptionPolicy(p, field.NewPath("preemptionPolicy"))...)
	}
	return allErrs
}

// ValidateUpdate: value and preemption policy are immutable; the rest of
// a class (its description, globalDefault) may change, system classes
// included, as in kube.
func (priorityClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pc, oldPC := obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pc.ObjectMeta, &oldPC.ObjectMeta, field.NewPath("metadata"))
	if pc.Value != oldPC.Value {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(allErrs, apivalidation.ValidateImmutableField(pc.PreemptionPolicy, oldPC.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

func validatePreemptionPolicy(p *corev1.PreemptionPolicy, fldPath *field.Path) field.ErrorList {
	switch *p {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, p, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever})}
}

// priorityClassREST refuses to delete a system class by name, as kube
// does (a collection delete, in kube, does not check; kube-apiserver
// creates the classes again at its next start, and so does this server).
type priorityClassREST struct {
	*generic.Store
}

// Delete implements rest.GracefulDeleter.
func (r *priorityClassREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	for _, sc := range SystemPriorityClasses() {
		if name == sc.Name {
			return nil, false, apierrors.NewForbidden(schedulingv1.Resource(priorityClasses.Name), name, errors.New("this is a system priority class and cannot be deleted"))
		}
	}
	return r.Store.Delete(ctx, name, deleteValidation, options)
}

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// PriorityClasses is the priority classes' store: kube's Priority
	// admission reads it, and the server creates kube's system classes
	// through it.
	PriorityClasses *generic.Store
}

// NewRESTStorageProvider returns the provider of scheduling.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(schedulingv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{PriorityClasses: s[0]} }, priorityClasses)
}
