package node

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestMergeTolerations: kube keeps, in order, the tolerations no other
// one covers; of two equal, the first.
func TestMergeTolerations(t *testing.T) {
	exists := func(key string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	}
	equal := func(key, value string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value}
	}
	seconds := func(tol corev1.Toleration, s int64) corev1.Toleration {
		tol.TolerationSeconds = ptr.To(s)
		return tol
	}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	for _, tc := range []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{equal("a", "1")}, []corev1.Toleration{equal("b", "2")}, []corev1.Toleration{equal("a", "1"), equal("b", "2")}},
		{"equal kept once", []corev1.Toleration{equal("a", "1")}, []corev1.Toleration{equal("a", "1")}, []corev1.Toleration{equal("a", "1")}},
		{"exists covers equal", []corev1.Toleration{equal("a", "1")}, []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}},
		{"any effect covers one", []corev1.Toleration{exists("a", corev1.TaintEffectNoSchedule)}, []corev1.Toleration{exists("a", "")}, []corev1.Toleration{exists("a", "")}},
		{"empty key covers all", []corev1.Toleration{equal("a", "1"), exists("b", corev1.TaintEffectNoExecute)}, []corev1.Toleration{everything}, []corev1.Toleration{everything}},
		{"shorter NoExecute does not cover longer", []corev1.Toleration{seconds(exists("a", corev1.TaintEffectNoExecute), 300)},
			[]corev1.Toleration{seconds(exists("a", corev1.TaintEffectNoExecute), 60)},
			[]corev1.Toleration{seconds(exists("a", corev1.TaintEffectNoExecute), 300)}},
		{"unbounded NoExecute covers bounded", []corev1.Toleration{seconds(exists("a", corev1.TaintEffectNoExecute), 300)},
			[]corev1.Toleration{exists("a", corev1.TaintEffectNoExecute)}, []corev1.Toleration{exists("a", corev1.TaintEffectNoExecute)}},
		{"none", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeTolerations(tc.first, tc.second); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
