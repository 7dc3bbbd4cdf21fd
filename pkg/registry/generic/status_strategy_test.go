package generic_test

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// finalizingStrategy is a main strategy with finalizers of its own
// (as namespaces have).
type finalizingStrategy struct{ generic.BaseStrategy }

func (finalizingStrategy) FinalizersPending(runtime.Object) bool { return true }

// TestStatusStrategyKeeps: a status write changes the status only; with
// KeepMetadata the metadata a status writer may not change stays too,
// without it the labels may change.
func TestStatusStrategyKeeps(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          generic.StatusStrategy
		wantLabels map[string]string
		wantReset  string
	}{
		{"spec only", generic.StatusStrategy{Main: generic.BaseStrategy{}, GroupVersion: "v1"},
			map[string]string{"new": "x"}, ".spec"},
		{"metadata too", generic.StatusStrategy{Main: generic.BaseStrategy{}, GroupVersion: "v1", KeepMetadata: true},
			map[string]string{"app": "a"}, ".metadata\n.spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"app": "a"}},
				Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}}
			obj := old.DeepCopy()
			obj.Labels = map[string]string{"new": "x"}
			obj.Spec.ClusterIP = "10.0.0.2"
			obj.Status.Conditions = []metav1.Condition{{Type: "Ready"}}
			tc.s.PrepareForUpdate(context.Background(), obj, old)
			if obj.Spec.ClusterIP != "10.0.0.1" || len(obj.Status.Conditions) != 1 {
				t.Errorf("spec %+v status %+v, want the stored spec and the new status", obj.Spec, obj.Status)
			}
			if !reflect.DeepEqual(obj.Labels, tc.wantLabels) {
				t.Errorf("labels %v, want %v", obj.Labels, tc.wantLabels)
			}
			if got := tc.s.GetResetFields()["v1"].String(); got != tc.wantReset {
				t.Errorf("reset fields %q, want %q", got, tc.wantReset)
			}
		})
	}
}

// TestStatusStrategyForwardsFinalizers: a status write does not delete
// an object whose main strategy still has finalizers pending.
func TestStatusStrategyForwardsFinalizers(t *testing.T) {
	if !(generic.StatusStrategy{Main: finalizingStrategy{}}).FinalizersPending(&corev1.Namespace{}) {
		t.Error("FinalizersPending not forwarded to the main strategy")
	}
	if (generic.StatusStrategy{Main: generic.BaseStrategy{}}).FinalizersPending(&corev1.Namespace{}) {
		t.Error("FinalizersPending without the main strategy's: want false")
	}
}
