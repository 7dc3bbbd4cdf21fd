package conversion

import (
	"encoding/json"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// The annotations autoscaling/v1 carries what it has no field for in, so
// that an object read and written back at v1 keeps it (kube's names).
const (
	hpaMetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	hpaCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	hpaConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	hpaBehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	// Written by kube's older versions only, and dropped like the others.
	hpaScaleDownToleranceAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	hpaScaleUpToleranceAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

// DefaultCPUUtilization is the CPU target of an autoscaler with no
// metrics: v2 defaults it, and v1 (which never required one) gets it on
// conversion.
const DefaultCPUUtilization = 80

var hpaRoundTripAnnotations = []string{hpaMetricsAnnotation, hpaCurrentMetricsAnnotation, hpaConditionsAnnotation,
	hpaBehaviorAnnotation, hpaScaleDownToleranceAnnotation, hpaScaleUpToleranceAnnotation}

// dropHPARoundTripAnnotations returns in without the round-trip
// annotations: a copy when it had any, in itself otherwise.
func dropHPARoundTripAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for _, k := range hpaRoundTripAnnotations {
		if _, ok := in[k]; ok {
			if out == nil {
				out = maps.Clone(in)
			}
			delete(out, k)
		}
	}
	if out == nil {
		return in
	}
	return out
}

// hpaV2ToV1 converts a stored autoscaling/v2 autoscaler to v1, as kube
// does through its internal version: the first CPU utilization target
// becomes targetCPUUtilizationPercentage, and what v1 cannot say (other
// metrics, behavior, current metrics, conditions) goes to annotations.
func hpaV2ToV1(inObj, outObj runtime.Object) error {
	in, out := inObj.(*autoscalingv2.HorizontalPodAutoscaler), outObj.(*autoscalingv1.HorizontalPodAutoscaler)
	out.ObjectMeta = in.ObjectMeta
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
		MinReplicas:    in.Spec.MinReplicas,
		MaxReplicas:    in.Spec.MaxReplicas,
	}
	var otherMetrics []autoscalingv1.MetricSpec
	for i := range in.Spec.Metrics {
		m := &in.Spec.Metrics[i]
		if isCPUUtilizationTarget(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = ptrTo(*m.Resource.Target.AverageUtilization)
			}
			continue
		}
		otherMetrics = append(otherMetrics, metricSpecV2ToV1(m))
	}
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: in.Status.ObservedGeneration,
		LastScaleTime:      in.Status.LastScaleTime,
		CurrentReplicas:    in.Status.CurrentReplicas,
		DesiredReplicas:    in.Status.DesiredReplicas,
	}
	currentMetrics := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
	for i := range in.Status.CurrentMetrics {
		m := &in.Status.CurrentMetrics[i]
		// The last CPU utilization wins, as in kube.
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = ptrTo(*m.Resource.Current.AverageUtilization)
		}
		currentMetrics[i] = metricStatusV2ToV1(m)
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
	for i, c := range in.Status.Conditions {
		conditions[i] = autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
			Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}

	annotations := annotationWriter{m: dropHPARoundTripAnnotations(in.Annotations), shared: true}
	if len(otherMetrics) > 0 {
		annotations.setJSON(hpaMetricsAnnotation, otherMetrics)
	}
	if len(currentMetrics) > 0 {
		annotations.setJSON(hpaCurrentMetricsAnnotation, currentMetrics)
	}
	if in.Spec.Behavior != nil {
		annotations.setJSON(hpaBehaviorAnnotation, behaviorToAnnotation(in.Spec.Behavior))
	}
	if len(conditions) > 0 {
		annotations.setJSON(hpaConditionsAnnotation, conditions)
	}
	out.Annotations = annotations.m
	return annotations.err
}

func isCPUUtilizationTarget(m *autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
		m.Resource.Target.AverageUtilization != nil
}

// annotationWriter sets annotations on a map it copies before its first
// change while shared (the input object's).
type annotationWriter struct {
	m      map[string]string
	shared bool
	err    error
}

func (w *annotationWriter) setJSON(key string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		w.err = err
		return
	}
	if w.shared || w.m == nil {
		w.m = maps.Clone(w.m)
		if w.m == nil {
			w.m = map[string]string{}
		}
		w.shared = false
	}
	w.m[key] = string(data)
}

// hpaV1ToV2 converts an autoscaling/v1 autoscaler to v2, as kube does
// through its internal version: targetCPUUtilizationPercentage becomes a
// CPU utilization metric (80 % when there is no metric at all), and the
// round-trip annotations, when they parse, give back what v1 cannot say;
// they are dropped either way.
func hpaV1ToV2(inObj, outObj runtime.Object) error {
	in, out := inObj.(*autoscalingv1.HorizontalPodAutoscaler), outObj.(*autoscalingv2.HorizontalPodAutoscaler)
	out.ObjectMeta = in.ObjectMeta
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
		MinReplicas:    in.Spec.MinReplicas,
		MaxReplicas:    in.Spec.MaxReplicas,
	}
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(*in.Spec.TargetCPUUtilizationPercentage)}
	}
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: in.Status.ObservedGeneration,
		LastScaleTime:      in.Status.LastScaleTime,
		CurrentReplicas:    in.Status.CurrentReplicas,
		DesiredReplicas:    in.Status.DesiredReplicas,
	}
	if in.Status.CurrentCPUUtilizationPercentage != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptrTo(*in.Status.CurrentCPUUtilizationPercentage)}},
		}}
	}

	var otherMetrics []autoscalingv1.MetricSpec
	if unmarshalAnnotation(in.Annotations, hpaMetricsAnnotation, &otherMetrics) {
		// The CPU target of the spec comes after the others.
		metrics := make([]autoscalingv2.MetricSpec, 0, len(otherMetrics)+len(out.Spec.Metrics))
		for i := range otherMetrics {
			metrics = append(metrics, metricSpecV1ToV2(&otherMetrics[i]))
		}
		out.Spec.Metrics = append(metrics, out.Spec.Metrics...)
	}
	var behavior behaviorAnnotation
	if unmarshalAnnotation(in.Annotations, hpaBehaviorAnnotation, &behavior) && (behavior.ScaleUp != nil || behavior.ScaleDown != nil) {
		out.Spec.Behavior = behaviorFromAnnotation(&behavior)
	}
	var currentMetrics []autoscalingv1.MetricStatus
	if unmarshalAnnotation(in.Annotations, hpaCurrentMetricsAnnotation, &currentMetrics) {
		// They say more than currentCPUUtilizationPercentage: they win.
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(currentMetrics))
		for i := range currentMetrics {
			out.Status.CurrentMetrics[i] = metricStatusV1ToV2(&currentMetrics[i])
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(DefaultCPUUtilization)}
	}
	var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
	if unmarshalAnnotation(in.Annotations, hpaConditionsAnnotation, &conditions) {
		out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conditions))
		for i, c := range conditions {
			out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
		}
	}
	out.Annotations = dropHPARoundTripAnnotations(out.Annotations)
	return nil
}

// unmarshalAnnotation decodes the annotation key into v and reports
// whether it was there and parsed: a broken annotation is ignored, as
// kube ignores it.
func unmarshalAnnotation(annotations map[string]string, key string, v any) bool {
	data, ok := annotations[key]
	return ok && json.Unmarshal([]byte(data), v) == nil
}

func cpuUtilizationMetric(utilization int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptrTo(utilization)}},
	}
}

// behaviorAnnotation is how kube writes a behavior in the annotation: its
// internal type encoded as is, with Go's field names and no omitted
// fields. Decoding matches names without regard to case, as Go's does.
type behaviorAnnotation struct {
	ScaleUp   *scalingRulesAnnotation
	ScaleDown *scalingRulesAnnotation
}

type scalingRulesAnnotation struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []scalingPolicyAnnotation
	Tolerance                  *resource.Quantity
}

type scalingPolicyAnnotation struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToAnnotation(in *autoscalingv2.HorizontalPodAutoscalerBehavior) *behaviorAnnotation {
	return &behaviorAnnotation{ScaleUp: rulesToAnnotation(in.ScaleUp), ScaleDown: rulesToAnnotation(in.ScaleDown)}
}

func rulesToAnnotation(in *autoscalingv2.HPAScalingRules) *scalingRulesAnnotation {
	if in == nil {
		return nil
	}
	out := &scalingRulesAnnotation{StabilizationWindowSeconds: in.StabilizationWindowSeconds, SelectPolicy: in.SelectPolicy, Tolerance: in.Tolerance}
	if in.Policies != nil {
		out.Policies = make([]scalingPolicyAnnotation, len(in.Policies))
		for i, p := range in.Policies {
			out.Policies[i] = scalingPolicyAnnotation(p)
		}
	}
	return out
}

func behaviorFromAnnotation(in *behaviorAnnotation) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rulesFromAnnotation(in.ScaleUp), ScaleDown: rulesFromAnnotation(in.ScaleDown)}
}

func rulesFromAnnotation(in *scalingRulesAnnotation) *autoscalingv2.HPAScalingRules {
	if in == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: in.StabilizationWindowSeconds, SelectPolicy: in.SelectPolicy, Tolerance: in.Tolerance}
	if in.Policies != nil {
		out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(in.Policies))
		for i, p := range in.Policies {
			out.Policies[i] = autoscalingv2.HPAScalingPolicy(p)
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
