package generic

import (
	"encoding/json"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// benchVersionedStore serves autoscaling/v2 autoscalers at v1, without
// storage: the benchmarks convert stored objects only.
func benchVersionedStore() *VersionedStore {
	return &VersionedStore{
		store: &Store{newFunc: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }},
		versioner: versioner{
			version: Version{
				Kind: autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
				New:  func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} }, Converter: conversion.Builtin(),
			},
			storageKind: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		},
		memoKey: "autoscaling/v1, Kind=HorizontalPodAutoscaler",
	}
}

// storedHPA is a typical stored autoscaler: a CPU and a memory target, a
// behavior, and a status with current metrics and conditions.
func storedHPA(b *testing.B) *storage.Object {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v2"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "6bcc2021-c293-487e-9bbf-3a4453f7d210", Generation: 3},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("500Mi"))}}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: 3, DesiredReplicas: 3,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](55)}}}},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale"}},
		},
	}
	data, err := json.Marshal(h)
	if err != nil {
		b.Fatal(err)
	}
	obj, err := storage.NewObject("/registry/horizontalpodautoscalers/default/web", 42, data)
	if err != nil {
		b.Fatal(err)
	}
	return obj
}

// BenchmarkConvertObject is what a list item or a watch event costs at a
// version other than the stored one: decode, convert, encode.
func BenchmarkConvertObject(b *testing.B) {
	s, obj := benchVersionedStore(), storedHPA(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.convertObject(obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVersionedWatchFanout100 is one event reaching 100 watchers of
// the served version: shared (the watch cache's Shareable event, converted
// once through its memo) or not (each watcher converting it).
func BenchmarkVersionedWatchFanout100(b *testing.B) {
	for _, tc := range []struct {
		name   string
		shared bool
	}{{"shared", true}, {"unshared", false}} {
		b.Run(tc.name, func(b *testing.B) {
			s, stored := benchVersionedStore(), storedHPA(b)
			b.ReportAllocs()
			for b.Loop() {
				ev := stored
				if tc.shared {
					ev = stored.Shareable()
				}
				for range 100 {
					if _, err := ev.Converted(s.memoKey, func() (*storage.Object, error) { return s.convertObject(ev) }); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
