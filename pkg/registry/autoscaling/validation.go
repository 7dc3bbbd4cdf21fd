package autoscaling

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// kube's limits of a scaling behavior.
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

// validateHPA is kube's validation of an autoscaler (old is nil on
// create), on the stored version, which every served version converts
// to: field paths are autoscaling/v2's at either version, as in kube.
// minReplicas and maxReplicas are checked last, as kube's declarative
// validation (authoritative for them in 1.37) checks them.
func validateHPA(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	metaPath, specPath := field.NewPath("metadata"), field.NewPath("spec")
	var allErrs field.ErrorList
	if old == nil {
		allErrs = corevalidation.ValidateObjectMeta(&h.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath)
	} else {
		allErrs = corevalidation.ValidateObjectMetaUpdate(&h.ObjectMeta, &old.ObjectMeta, metaPath)
	}
	spec := &h.Spec
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		allErrs = append(allErrs, field.Invalid(specPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	refOpts := referenceOptions{}
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == spec.ScaleTargetRef.APIVersion && old.Spec.ScaleTargetRef.Kind == spec.ScaleTargetRef.Kind:
		refOpts.allowInvalidAPIVersion = true // unchanged: not checked again
	case spec.ScaleTargetRef.Kind == "ReplicationController":
		refOpts.allowEmptyGroup = true // the one scalable kind of the core group
	}
	allErrs = append(allErrs, validateReference(spec.ScaleTargetRef, specPath.Child("scaleTargetRef"), refOpts)...)
	metricOpts := referenceOptions{allowEmptyGroup: true, allowInvalidAPIVersion: old != nil && hasInvalidObjectMetric(old)}
	allErrs = append(allErrs, validateMetrics(spec.Metrics, specPath.Child("metrics"), spec.MinReplicas, metricOpts)...)
	if b := spec.Behavior; b != nil {
		allErrs = append(allErrs, validateScalingRules(b.ScaleUp, specPath.Child("behavior", "scaleUp"))...)
		allErrs = append(allErrs, validateScalingRules(b.ScaleDown, specPath.Child("behavior", "scaleDown"))...)
	}
	return append(allErrs, validateReplicaBounds(spec, specPath)...)
}

// validateReplicaBounds: kube 1.37 allows minReplicas 0 (HPAScaleToZero,
// on by default).
func validateReplicaBounds(spec *autoscalingv2.HorizontalPodAutoscalerSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 0"))
	}
	switch {
	case spec.MaxReplicas == 0:
		allErrs = append(allErrs, field.Required(specPath.Child("maxReplicas"), ""))
	case spec.MaxReplicas < 0:
		allErrs = append(allErrs, field.Invalid(specPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to 1"))
	}
	return allErrs
}

type referenceOptions struct {
	allowEmptyGroup        bool
	allowInvalidAPIVersion bool
}

func validateReference(ref autoscalingv2.CrossVersionObjectReference, fldPath *field.Path, opts referenceOptions) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child(f.name), ""))
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.value) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(f.name), f.value, msg))
		}
	}
	if err := checkAPIVersion(ref, opts); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return allErrs
}

func checkAPIVersion(ref autoscalingv2.CrossVersionObjectReference, opts referenceOptions) error {
	if opts.allowInvalidAPIVersion {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyGroup && gv.Group == "" {
		return fmt.Errorf("apiVersion must specify API group")
	}
	return nil
}

// hasInvalidObjectMetric: an update may keep an object metric whose
// apiVersion was already invalid.
func hasInvalidObjectMetric(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, m := range h.Spec.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil &&
			checkAPIVersion(m.Object.DescribedObject, referenceOptions{allowEmptyGroup: true}) != nil {
			return true
		}
	}
	return false
}

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, fldPath *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var allErrs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && *w < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	} else if w != nil && *w > maxStabilizationWindowSeconds {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w,
			fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if p := rules.SelectPolicy; p != nil && *p != autoscalingv2.MaxChangePolicySelect && *p != autoscalingv2.MinChangePolicySelect &&
		*p != autoscalingv2.DisabledPolicySelect {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("selectPolicy"), p, []string{"Disabled", "Max", "Min"}))
	}
	policiesPath := fldPath.Child("policies")
	if len(rules.Policies) == 0 {
		allErrs = append(allErrs, field.Required(policiesPath, "must specify at least one Policy"))
	}
	for i, p := range rules.Policies {
		idxPath := policiesPath.Index(i)
		if p.Type != autoscalingv2.PodsScalingPolicy && p.Type != autoscalingv2.PercentScalingPolicy {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("type"), p.Type, []string{"Percent", "Pods"}))
		}
		if p.Value <= 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("value"), p.Value, "must be greater than zero"))
		}
		if p.PeriodSeconds <= 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("periodSeconds"), p.PeriodSeconds, "must be greater than zero"))
		}
		if p.PeriodSeconds > maxPeriodSeconds {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("periodSeconds"), p.PeriodSeconds,
				fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
		}
	}
	if t := rules.Tolerance; t != nil && t.Cmp(resource.Quantity{}) < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("tolerance"), t.String(), apivalidation.IsNegativeErrorMsg))
	}
	return allErrs
}

// validateHPAStatusUpdate is kube's check of a status update.
func validateHPAStatusUpdate(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&h.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	for i, c := range h.Status.Conditions {
		if c.ObservedGeneration != nil {
			allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(*c.ObservedGeneration, statusPath.Child("conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(h.Status.CurrentReplicas), statusPath.Child("currentReplicas"))...)
	return append(allErrs, apivalidation.ValidateNonnegativeField(int64(h.Status.DesiredReplicas), statusPath.Child("desiredReplicas"))...)
}
