package resource

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var taintDocs = resourcev1.DeviceTaint{}.SwaggerDoc()

var deviceTaintRules = generic.Resource{
	Name: "devicetaintrules", Singular: "devicetaintrule", Kind: "DeviceTaintRule",
	New: generic.NewOf[resourcev1.DeviceTaintRule], NewList: generic.NewOf[resourcev1.DeviceTaintRuleList],
	Strategy: deviceTaintRuleStrategy{},
	StatusStrategy: generic.StatusStrategy{Main: deviceTaintRuleStrategy{}, GroupVersion: "resource.k8s.io/v1",
		KeepMetadata: true, Validate: validateDeviceTaintRuleStatusUpdate},
	// kube prints the taint, not the selector (which may be long).
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Key", Type: "string", Description: taintDocs["key"]},
		{Name: "Value", Type: "string", Description: taintDocs["value"]},
		{Name: "Effect", Type: "string", Description: taintDocs["effect"]},
		{Name: "TimeAdded", Type: "string", Description: taintDocs["timeAdded"]},
		generic.AgeColumn,
	}, func(r *resourcev1.DeviceTaintRule) ([]interface{}, error) {
		added := ""
		if t := r.Spec.Taint.TimeAdded; t != nil {
			added = generic.TranslateTimestampSince(*t)
		}
		taint := r.Spec.Taint
		return []interface{}{r.Name, taint.Key, taint.Value, string(taint.Effect), added, generic.TranslateTimestampSince(r.CreationTimestamp)}, nil
	}),
}

// deviceTaintRuleStrategy: a rule taints the devices it selects; its
// status (eviction progress) belongs to devicetaintrules/status. At v1 an
// update must name the resourceVersion it read.
type deviceTaintRuleStrategy struct{ generic.GenerationStrategy }

func (deviceTaintRuleStrategy) AllowUnconditionalUpdate() bool { return false }

func (deviceTaintRuleStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("resource.k8s.io/v1", "status")
}

func (deviceTaintRuleStrategy) Default(obj runtime.Object) {
	defaultTaint(&obj.(*resourcev1.DeviceTaintRule).Spec.Taint)
}

// PrepareForUpdate: a new effect is a new taint, added now, unless the
// client set the time itself (a spec change, so the generation grows).
func (s deviceTaintRuleStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	if r.Spec.Taint.Effect != oldR.Spec.Taint.Effect && r.Spec.Taint.TimeAdded.Equal(oldR.Spec.Taint.TimeAdded) {
		r.Spec.Taint.TimeAdded = now()
	}
	s.GenerationStrategy.PrepareForUpdate(ctx, obj, old)
}

func (deviceTaintRuleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	r := obj.(*resourcev1.DeviceTaintRule)
	allErrs := corevalidation.ValidateObjectMeta(&r.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return declarativeLast(append(allErrs, validateTaintRuleSpec(&r.Spec, nil, field.NewPath("spec"))...))
}

func (deviceTaintRuleStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	r, oldR := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &oldR.ObjectMeta, field.NewPath("metadata"))
	return declarativeLast(append(allErrs, validateTaintRuleSpec(&r.Spec, &oldR.Spec, field.NewPath("spec"))...))
}

func validateTaintRuleSpec(spec, old *resourcev1.DeviceTaintRuleSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s := spec.DeviceSelector; s != nil {
		path := fldPath.Child("deviceSelector")
		if s.Driver != nil {
			allErrs = append(allErrs, validateDriverName(*s.Driver, path.Child("driver"))...)
		}
		if s.Pool != nil {
			allErrs = append(allErrs, validatePoolName(*s.Pool, path.Child("pool"))...)
		}
		if s.Device != nil {
			allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(*s.Device, path.Child("device"))...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Taint
	}
	return append(allErrs, validateDeviceTaint(spec.Taint, oldTaint, fldPath.Child("taint"))...)
}

// validateDeviceTaintRuleStatusUpdate checks a devicetaintrules/status
// write: the metadata and a bounded list of valid conditions.
func validateDeviceTaintRuleStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	r, oldR := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &oldR.ObjectMeta, field.NewPath("metadata"))
	conditions := field.NewPath("status", "conditions")
	allErrs = append(allErrs, metav1validation.ValidateConditions(r.Status.Conditions, conditions)...)
	if len(r.Status.Conditions) > resourcev1.DeviceTaintRuleStatusMaxConditions {
		allErrs = append(allErrs, field.TooMany(conditions, len(r.Status.Conditions), resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return allErrs
}
