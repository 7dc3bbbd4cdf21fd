package admission

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// What the scheduling plugins (PodNodeSelector, PodTolerationRestriction,
// ExtendedResourceToleration, LimitPodHardAntiAffinityTopology) share:
// kube's toleration arithmetic (its pkg/util/tolerations), the pods they
// look at, and the error kube answers when a plugin returns a plain error.

// toleratesAll reports whether wide tolerates every taint narrow does:
// the same toleration, or one of the same (or any, for an Exists without
// key) key and (or any) effect, no shorter NoExecute time, and a value
// matching under wide's operator. An Equal toleration covers only Equal
// ones: kube does not read an empty operator as Equal on the narrow side.
func toleratesAll(wide, narrow corev1.Toleration) bool {
	if equality.Semantic.DeepEqual(&wide, &narrow) {
		return true
	}
	anyKey := wide.Key == "" && wide.Operator == corev1.TolerationOpExists
	if narrow.Key != wide.Key && !anyKey {
		return false
	}
	if narrow.Effect != wide.Effect && wide.Effect != "" {
		return false
	}
	if wide.Effect == corev1.TaintEffectNoExecute && wide.TolerationSeconds != nil &&
		(narrow.TolerationSeconds == nil || *narrow.TolerationSeconds > *wide.TolerationSeconds) {
		return false
	}
	switch wide.Operator {
	case corev1.TolerationOpEqual, "":
		return narrow.Operator == corev1.TolerationOpEqual && narrow.Value == wide.Value
	case corev1.TolerationOpExists:
		return true
	default:
		return false
	}
}

// mergeTolerations is first then second, less every toleration another
// one covers (of equal ones, the first is kept): what kube's plugins give
// a pod whose tolerations they extend.
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := make([]corev1.Toleration, 0, len(first)+len(second))
	all = append(append(all, first...), second...)
	var merged []corev1.Toleration
	for i, t := range all {
		if !coveredByKept(t, merged) && !coveredByLater(t, all[i+1:]) {
			merged = append(merged, t)
		}
	}
	return merged
}

func coveredByKept(t corev1.Toleration, kept []corev1.Toleration) bool {
	for _, k := range kept {
		if toleratesAll(k, t) {
			return true
		}
	}
	return false
}

// coveredByLater: a later toleration that covers t replaces it, unless
// it is the same toleration (then t, the first, stays).
func coveredByLater(t corev1.Toleration, later []corev1.Toleration) bool {
	for _, l := range later {
		if !equality.Semantic.DeepEqual(&t, &l) && toleratesAll(l, t) {
			return true
		}
	}
	return false
}

// allowedBy reports whether each of tolerations is covered by one of
// whitelist; an empty whitelist allows anything.
func allowedBy(tolerations, whitelist []corev1.Toleration) bool {
	if len(whitelist) == 0 {
		return true
	}
	for _, t := range tolerations {
		if !coveredByKept(t, whitelist) {
			return false
		}
	}
	return true
}

// admittedPod is obj when a is a create (or, with updates, an update) of
// a pod itself, not of a subresource: what kube's scheduling plugins
// look at.
func admittedPod(a handlers.Attributes, obj runtime.Object, updates bool) (*corev1.Pod, bool) {
	if a.Resource.GroupResource() != corev1.Resource("pods") || a.Subresource != "" {
		return nil, false
	}
	if a.Operation != handlers.Create && (a.Operation != handlers.Update || !updates) {
		return nil, false
	}
	pod, ok := obj.(*corev1.Pod)
	return pod, ok
}

// mutatingName is the pod's name as kube's mutating plugins see it: kube
// generates names after mutating admission (and before validating
// admission), so a pod with generateName has none yet.
func mutatingName(pod *corev1.Pod) string {
	if pod.GenerateName != "" && generic.RequestedName(pod) != pod.Name {
		return ""
	}
	return pod.Name
}

// plainError is how kube answers a plugin's error that is not a Status:
// a 500 with no reason and the error's text (its handler's
// ErrorToAPIStatus). Built here so that it is not logged as a bug.
func plainError(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error(),
	}}
}

// admissionNamespace reads namespace name for a plugin as kube's read
// their informer, then the API: a namespace that is not there is kube's
// NotFound, any other failure an internal error.
func admissionNamespace(ctx context.Context, namespaces namespaceGetter, name string) (*corev1.Namespace, error) {
	ns, err := namespaces.GetNamespace(ctx, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, apierrors.NewInternalError(err)
	}
	return ns, err
}
