package autoscaling

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

var metricSourceTypes = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}

// validateMetrics is kube's check of an autoscaler's metrics. Scaling to
// zero needs a metric that does not come from the pods.
func validateMetrics(metrics []autoscalingv2.MetricSpec, fldPath *field.Path, minReplicas *int32, opts referenceOptions) field.ErrorList {
	var allErrs field.ErrorList
	external := false
	for i := range metrics {
		allErrs = append(allErrs, validateMetricSpec(&metrics[i], fldPath.Index(i), opts)...)
		if t := metrics[i].Type; t == autoscalingv2.ObjectMetricSourceType || t == autoscalingv2.ExternalMetricSourceType {
			external = true
		}
	}
	if minReplicas != nil && *minReplicas == 0 && !external {
		allErrs = append(allErrs, field.Forbidden(fldPath, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return allErrs
}

// validateMetricSpec checks the source the type names, and that no other
// is set. Sources are checked in kube's order, only the first one present.
func validateMetricSpec(spec *autoscalingv2.MetricSpec, fldPath *field.Path, opts referenceOptions) field.ErrorList {
	var allErrs field.ErrorList
	typePath := fldPath.Child("type")
	if spec.Type == "" {
		allErrs = append(allErrs, field.Required(typePath, "must specify a metric source type"))
	}
	sources := []struct {
		name     string
		typ      autoscalingv2.MetricSourceType
		present  bool
		validate func(*field.Path) field.ErrorList
	}{
		{"object", autoscalingv2.ObjectMetricSourceType, spec.Object != nil, func(p *field.Path) field.ErrorList { return validateObjectSource(spec.Object, p, opts) }},
		{"external", autoscalingv2.ExternalMetricSourceType, spec.External != nil, func(p *field.Path) field.ErrorList { return validateExternalSource(spec.External, p) }},
		{"pods", autoscalingv2.PodsMetricSourceType, spec.Pods != nil, func(p *field.Path) field.ErrorList { return validatePodsSource(spec.Pods, p) }},
		{"resource", autoscalingv2.ResourceMetricSourceType, spec.Resource != nil, func(p *field.Path) field.ErrorList {
			var nameErrs field.ErrorList
			if spec.Resource.Name == "" {
				nameErrs = field.ErrorList{field.Required(p.Child("name"), "must specify a resource name")}
			}
			return append(nameErrs, validateResourceTarget(spec.Resource.Target, p)...)
		}},
		{"containerResource", autoscalingv2.ContainerResourceMetricSourceType, spec.ContainerResource != nil, func(p *field.Path) field.ErrorList {
			return validateContainerResourceSource(spec.ContainerResource, p)
		}},
	}
	known := false
	for _, s := range sources {
		known = known || s.typ == spec.Type
	}
	if !known {
		allErrs = append(allErrs, field.NotSupported(typePath, spec.Type, metricSourceTypes))
	}
	var present []string
	for _, s := range sources {
		if !s.present {
			continue
		}
		present = append(present, s.name)
		if len(present) == 1 {
			allErrs = append(allErrs, s.validate(fldPath.Child(s.name))...)
		}
	}
	expected := ""
	for _, s := range sources {
		if s.typ == spec.Type {
			expected = s.name
			if !s.present {
				allErrs = append(allErrs, field.Required(fldPath.Child(s.name), "must populate information for the given metric source"))
			}
		}
	}
	if len(present) != 1 {
		for _, name := range present {
			if name != expected {
				allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "must populate the given metric source only"))
			}
		}
	}
	return allErrs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, fldPath *field.Path, opts referenceOptions) field.ErrorList {
	allErrs := validateReference(src.DescribedObject, fldPath.Child("describedObject"), opts)
	allErrs = append(allErrs, validateMetricIdentifier(src.Metric, fldPath.Child("metric"))...)
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return allErrs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return allErrs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	allErrs = append(allErrs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return allErrs
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if src.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	} else {
		allErrs = append(allErrs, corevalidation.ValidateContainerResourceName(src.Name, fldPath.Child("name"))...)
	}
	if src.Container == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("container"), "must specify a container"))
	} else {
		for _, msg := range validation.IsDNS1123Label(src.Container) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("container"), src.Container, msg))
		}
	}
	return append(allErrs, validateResourceTarget(src.Target, fldPath)...)
}

// validateResourceTarget checks the target of a resource or container
// resource metric.
func validateResourceTarget(target autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	allErrs := validateMetricTarget(target, fldPath.Child("target"))
	if target.AverageUtilization == nil && target.AverageValue == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageUtilization != nil && target.AverageValue != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return allErrs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if t.Type == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return allErrs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, fldPath *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "must specify a metric name")}
	}
	var allErrs field.ErrorList
	for _, msg := range content.IsPathSegmentName(id.Name) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), id.Name, msg))
	}
	return allErrs
}
