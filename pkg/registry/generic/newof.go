package generic

import "k8s.io/apimachinery/pkg/runtime"

// NewOf returns a new, empty T: a declaration's New and NewList name the
// kind and its list as NewOf[corev1.Pod] and NewOf[corev1.PodList]
// instead of writing a closure for each.
func NewOf[T any, PT interface {
	*T
	runtime.Object
}]() runtime.Object {
	return PT(new(T))
}
