package generic_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

func TestGenerationHelpers(t *testing.T) {
	base := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Generation: 4},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1)},
		Status:     appsv1.ReplicaSetStatus{Replicas: 1},
	}
	overhead := func(q string) func(rs *appsv1.ReplicaSet) {
		return func(rs *appsv1.ReplicaSet) {
			rs.Spec.Template.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		}
	}
	for _, tc := range []struct {
		name     string
		old, obj func(rs *appsv1.ReplicaSet)
		want     int64
	}{
		{name: "no change", want: 4},
		{name: "a label", obj: func(rs *appsv1.ReplicaSet) { rs.Labels = map[string]string{"a": "b"} }, want: 4},
		{name: "status only", obj: func(rs *appsv1.ReplicaSet) { rs.Status.Replicas = 3 }, want: 4},
		{name: "the spec", obj: func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To[int32](2) }, want: 5},
		{name: "a quantity written differently", old: overhead("1"), obj: overhead("1000m"), want: 4},
		{name: "a quantity changed", old: overhead("1"), obj: overhead("2"), want: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, obj := base.DeepCopy(), base.DeepCopy()
			if tc.old != nil {
				tc.old(old)
				tc.old(obj)
			}
			if tc.obj != nil {
				tc.obj(obj)
			}
			generic.BumpGenerationOnSpecChange(obj, old)
			if obj.Generation != tc.want {
				t.Errorf("generation = %d, want %d", obj.Generation, tc.want)
			}
		})
	}

	rs := base.DeepCopy()
	generic.ResetStatus(rs)
	generic.StartGeneration(rs)
	if rs.Generation != 1 || rs.Status.Replicas != 0 {
		t.Errorf("a new object: generation %d, status.replicas %d; want 1, 0", rs.Generation, rs.Status.Replicas)
	}
}
