// Package api holds the tables of what miniapiserver serves: the Scheme of
// every served Go type, and (generated) API documents. It imports nothing of
// this project, so every layer may use it.
package api

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Scheme knows every Go type served, by group, version and kind: the
// decoders and encoders of the HTTP layer use it to recognise request
// bodies and to name what they write.
var Scheme = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		appsv1.AddToScheme,
		coordinationv1.AddToScheme,
		autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		eventsv1.AddToScheme,
		apiextensionsv1.AddToScheme,
		metav1.AddMetaToScheme,
	} {
		utilruntime.Must(add(Scheme))
	}
	// Status, WatchEvent, ListOptions, ... in every group version, as
	// kube's API machinery expects.
	for _, gv := range []schema.GroupVersion{
		metav1.SchemeGroupVersion, corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion,
		coordinationv1.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion, autoscalingv2.SchemeGroupVersion,
		eventsv1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion,
	} {
		metav1.AddToGroupVersion(Scheme, gv)
	}
	utilruntime.Must(Scheme.SetVersionPriority(corev1.SchemeGroupVersion))
}
