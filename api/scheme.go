// Package api holds the tables of what miniapiserver serves: the Scheme of
// every served Go type, and (generated) API documents. It imports nothing of
// this project, so every layer may use it.
package api

import (
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Scheme returns the scheme of every Go type served, by group, version
// and kind: the decoders and encoders of the HTTP layer use it to
// recognise request bodies and to name what they write. It is built on
// the first call (a process that only answers --help never builds it)
// and is the same scheme for every later call; callers must not add to
// it.
func Scheme() *runtime.Scheme { return scheme() }

var scheme = sync.OnceValue(newScheme)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		appsv1.AddToScheme,
		coordinationv1.AddToScheme,
		autoscalingv1.AddToScheme,
		authenticationv1.AddToScheme,
		autoscalingv2.AddToScheme,
		eventsv1.AddToScheme,
		storagev1.AddToScheme,
		schedulingv1.AddToScheme,
		nodev1.AddToScheme,
		certificatesv1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		flowcontrolv1.AddToScheme,
		storagemigrationv1.AddToScheme,
		batchv1.AddToScheme,
		policyv1.AddToScheme,
		apiextensionsv1.AddToScheme,
		networkingv1.AddToScheme,
		discoveryv1.AddToScheme,
		resourcev1.AddToScheme,
		rbacv1.AddToScheme,
		authorizationv1.AddToScheme,
		metav1.AddMetaToScheme,
	} {
		utilruntime.Must(add(s))
	}
	// Status, WatchEvent, ListOptions, ... in every group version, as
	// kube's API machinery expects.
	for _, gv := range []schema.GroupVersion{
		metav1.SchemeGroupVersion, corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion,
		coordinationv1.SchemeGroupVersion, autoscalingv1.SchemeGroupVersion, autoscalingv2.SchemeGroupVersion,
		eventsv1.SchemeGroupVersion, authenticationv1.SchemeGroupVersion, storagev1.SchemeGroupVersion, schedulingv1.SchemeGroupVersion, nodev1.SchemeGroupVersion,
		certificatesv1.SchemeGroupVersion, admissionregistrationv1.SchemeGroupVersion,
		flowcontrolv1.SchemeGroupVersion, storagemigrationv1.SchemeGroupVersion,
		batchv1.SchemeGroupVersion, policyv1.SchemeGroupVersion,
		apiextensionsv1.SchemeGroupVersion,
		networkingv1.SchemeGroupVersion, discoveryv1.SchemeGroupVersion, resourcev1.SchemeGroupVersion,
		rbacv1.SchemeGroupVersion, authorizationv1.SchemeGroupVersion,
	} {
		metav1.AddToGroupVersion(s, gv)
	}
	utilruntime.Must(s.SetVersionPriority(corev1.SchemeGroupVersion))
	addV1beta1Eviction(s)
	addQueryConversions(s)
	addAPIRegistration(s)
	return s
}

// addV1beta1Eviction registers policy/v1beta1 Eviction, which
// pods/eviction accepts beside policy/v1's as kube does, and its
// conversion to policy/v1 (the two have the same fields).
func addV1beta1Eviction(s *runtime.Scheme) {
	s.AddKnownTypes(policyv1beta1.SchemeGroupVersion, &policyv1beta1.Eviction{})
	utilruntime.Must(s.AddConversionFunc((*policyv1beta1.Eviction)(nil), (*policyv1.Eviction)(nil), func(a, b interface{}, _ conversion.Scope) error {
		in, out := a.(*policyv1beta1.Eviction), b.(*policyv1.Eviction)
		out.ObjectMeta, out.DeleteOptions = in.ObjectMeta, in.DeleteOptions
		return nil
	}))
}

// addAPIRegistration registers apiregistration.k8s.io/v1 (kube-aggregator's
// types) without the package's AddToScheme, which would bring the
// conversions to kube-aggregator's internal types along.
func addAPIRegistration(s *runtime.Scheme) {
	s.AddKnownTypes(apiregistrationv1.SchemeGroupVersion, &apiregistrationv1.APIService{}, &apiregistrationv1.APIServiceList{})
	metav1.AddToGroupVersion(s, apiregistrationv1.SchemeGroupVersion)
}
