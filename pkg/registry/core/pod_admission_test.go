package core

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDefaultTolerations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tolerations []corev1.Toleration
		wantAdded   []string
	}{
		{name: "none", wantAdded: []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}},
		{name: "tolerates everything", tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{name: "tolerates not-ready", tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}},
			wantAdded: []string{corev1.TaintNodeUnreachable}},
		{name: "NoSchedule does not count", tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			wantAdded: []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: spec()}
			pod.Spec.Tolerations = slices.Clone(tc.tolerations)
			KubeDefaultTolerationSeconds.Add(&pod.Spec)
			var added []string
			for _, tol := range pod.Spec.Tolerations[len(tc.tolerations):] {
				if tol.TolerationSeconds == nil || *tol.TolerationSeconds != 300 || tol.Effect != corev1.TaintEffectNoExecute {
					t.Errorf("added %+v", tol)
				}
				added = append(added, tol.Key)
			}
			if !slices.Equal(added, tc.wantAdded) {
				t.Errorf("added %v, want %v", added, tc.wantAdded)
			}
		})
	}
}

func spec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}
}
