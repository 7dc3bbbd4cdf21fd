package scheduling

import (
	"testing"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefaultPriorityClass(t *testing.T) {
	pc := func(name string, value int32, def bool) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def}
	}
	for _, tc := range []struct {
		name    string
		classes []*schedulingv1.PriorityClass
		want    string
	}{
		{"none", []*schedulingv1.PriorityClass{pc("a", 1, false)}, ""},
		{"one", []*schedulingv1.PriorityClass{pc("a", 1, false), pc("b", 5, true)}, "b"},
		{"a race left two: the lowest value", []*schedulingv1.PriorityClass{pc("high", 9, true), pc("low", 3, true)}, "low"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if def := DefaultPriorityClass(tc.classes); def != nil {
				got = def.Name
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckSystemClass(t *testing.T) {
	for _, tc := range []struct {
		name          string
		value         int32
		globalDefault bool
		want          string
	}{
		{"system-node-critical", 2000001000, false, ""},
		{"system-cluster-critical", 2000000000, false, ""},
		{"system-node-critical", 5, false, "value of system-node-critical PriorityClass must be 2000001000"},
		{"system-cluster-critical", 2000000000, true, "globalDefault of system-cluster-critical PriorityClass must be false"},
		{"system-other", 1, false, "system-other is not a known system priority class"},
	} {
		got := ""
		if err := checkSystemClass(tc.name, tc.value, tc.globalDefault); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s %d %v: got %q, want %q", tc.name, tc.value, tc.globalDefault, got, tc.want)
		}
	}
}
