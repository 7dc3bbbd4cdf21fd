package conversion

import (
	"fmt"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Builtin returns the conversions of the built-in kinds served at more
// than one version, each family with its storage version as hub (as kube
// stores them):
//
//   - autoscaling/v2 HorizontalPodAutoscaler <- autoscaling/v1
//   - core v1 Event <- events.k8s.io/v1 Event
//
// A new built-in version registers its conversions here; its resource
// then lists the version (generic.Version) and the handlers serve it
// unchanged.
var Builtin = sync.OnceValue(func() *Registry {
	r := NewRegistry()
	must(r.AddHub(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }))
	must(r.AddSpoke(autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} }, hpaV1ToV2, hpaV2ToV1))

	must(r.AddHub(corev1.SchemeGroupVersion.WithKind("Event"), func() runtime.Object { return &corev1.Event{} }))
	must(r.AddSpoke(eventsv1.SchemeGroupVersion.WithKind("Event"), corev1.SchemeGroupVersion.WithKind("Event"),
		func() runtime.Object { return &eventsv1.Event{} }, eventV1ToCore, eventCoreToV1))
	return r
})

func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("conversion: built-in registry: %v", err))
	}
}
