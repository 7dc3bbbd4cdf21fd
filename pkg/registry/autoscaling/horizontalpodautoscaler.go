package autoscaling

import (
	"context"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// horizontalPodAutoscalers are stored at autoscaling/v2, as kube stores
// them, and served at v1 too.
var horizontalPodAutoscalers = generic.Resource{
	Name: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler", Namespaced: true,
	ShortNames:     []string{"hpa"},
	Categories:     []string{"all"},
	New:            generic.NewOf[autoscalingv2.HorizontalPodAutoscaler],
	NewList:        generic.NewOf[autoscalingv2.HorizontalPodAutoscalerList],
	Strategy:       hpaStrategy{generic.GenerationStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}},
	StatusStrategy: hpaStatusStrategy{hpaStrategy{generic.GenerationStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}}},
	Table:          hpaTable,
	Versions: []generic.Version{{
		Kind:      autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		New:       generic.NewOf[autoscalingv1.HorizontalPodAutoscaler],
		NewList:   generic.NewOf[autoscalingv1.HorizontalPodAutoscalerList],
		Converter: conversion.Builtin(),
		Defaults: func(obj runtime.Object) {
			// v1's CPU target comes from the conversion, which knows the
			// other metrics (in an annotation).
			if h := obj.(*autoscalingv1.HorizontalPodAutoscaler); h.Spec.MinReplicas == nil {
				h.Spec.MinReplicas = ptr.To[int32](1)
			}
		},
	}},
}

// hpaStrategy: the status is the autoscaler's, and the generation counts
// spec changes (kube 1.37's HPAGeneration, on by default), as
// GenerationStrategy does.
type hpaStrategy struct{ generic.GenerationStrategy }

var (
	_ rest.Defaulter           = hpaStrategy{}
	_ rest.ResetFieldsStrategy = hpaStrategy{}
)

// GetResetFields implements rest.ResetFieldsStrategy: the main resource
// does not change status, at either version.
func (hpaStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetAtBothVersions("status")
}

func resetAtBothVersions(path string) map[fieldpath.APIVersion]*fieldpath.Set {
	fields := generic.ResetFields("autoscaling/v2", path)
	for v, set := range generic.ResetFields("autoscaling/v1", path) {
		fields[v] = set
	}
	return fields
}

// Default implements rest.Defaulter with kube's autoscaling/v2 defaults:
// one replica at least, an 80 % CPU target when there is no metric, and
// every rule of a behavior that has one.
func (hpaStrategy) Default(obj runtime.Object) {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
				Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](conversion.DefaultCPUUtilization)}},
		}}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = defaultScalingRules(b.ScaleUp, scaleUpRules())
		b.ScaleDown = defaultScalingRules(b.ScaleDown, scaleDownRules())
	}
}

// scaleUpRules are kube's: no stabilization, at most 4 pods or double
// every 15 s. scaleDownRules: everything every 15 s, and no stabilization
// window, which the controller manager's flag decides.
func scaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

func scaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
}

// defaultScalingRules fills what rules leave unset from defaults.
func defaultScalingRules(rules, defaults *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if rules == nil {
		return defaults
	}
	if rules.SelectPolicy != nil {
		defaults.SelectPolicy = rules.SelectPolicy
	}
	if rules.StabilizationWindowSeconds != nil {
		defaults.StabilizationWindowSeconds = rules.StabilizationWindowSeconds
	}
	if rules.Policies != nil {
		defaults.Policies = rules.Policies
	}
	defaults.Tolerance = rules.Tolerance
	return defaults
}

func (hpaStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler), nil)
}

func (hpaStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler))
}

// hpaStatusStrategy changes status only.
type hpaStatusStrategy struct{ hpaStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (hpaStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetAtBothVersions("spec")
}

// PrepareForUpdate keeps the spec; metadata may change, as in kube.
func (hpaStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*autoscalingv2.HorizontalPodAutoscaler).Spec = old.(*autoscalingv2.HorizontalPodAutoscaler).Spec
}

func (hpaStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateHPAStatusUpdate(obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler))
}
