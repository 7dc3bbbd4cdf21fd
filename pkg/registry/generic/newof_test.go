package generic_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// TestNewOf: each call makes a new, empty object of the named type, as
// the closures it stands for did.
func TestNewOf(t *testing.T) {
	newPod := generic.NewOf[corev1.Pod]
	a, b := newPod(), newPod()
	pod, ok := a.(*corev1.Pod)
	if !ok || pod == nil {
		t.Fatalf("NewOf[corev1.Pod]() = %T, want a non-nil *corev1.Pod", a)
	}
	if a == b {
		t.Error("NewOf returned the same object twice")
	}
	if _, ok := generic.NewOf[corev1.PodList]().(*corev1.PodList); !ok {
		t.Error("NewOf[corev1.PodList]() is not a *corev1.PodList")
	}
}
