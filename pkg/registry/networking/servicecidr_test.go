package networking

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func serviceCIDR(cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "sc", ResourceVersion: "1"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

// TestServiceCIDRUpdate: ranges never change, but a single-stack
// ServiceCIDR may gain a range of the other family.
func TestServiceCIDRUpdate(t *testing.T) {
	old := serviceCIDR("10.0.0.0/24")
	for _, tc := range []struct {
		name  string
		cidrs []string
		want  string
	}{
		{"unchanged", []string{"10.0.0.0/24"}, ""},
		{"changed", []string{"10.1.0.0/24"}, `spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable`},
		{"dual-stack", []string{"10.0.0.0/24", "fd00::/64"}, ""},
		{"same family added", []string{"10.0.0.0/24", "10.1.0.0/24"},
			`spec.cidrs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`},
		{"first changed while adding", []string{"10.2.0.0/24", "fd00::/64"}, `spec.cidrs[0]: Invalid value: "10.2.0.0/24": field is immutable`},
		{"removed", nil, `spec.cidrs: Invalid value: null: field is immutable`},
		{"three", []string{"10.0.0.0/24", "fd00::/64", "fd01::/64"}, `spec.cidrs: Invalid value: ["10.0.0.0/24","fd00::/64","fd01::/64"]: field is immutable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := causes(serviceCIDRStrategy{}.ValidateUpdate(context.Background(), serviceCIDR(tc.cidrs...), old)); got != tc.want {
				t.Errorf("causes:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestServiceCIDRStatus: /status changes only status, and none of the
// metadata kube keeps there; the main resource keeps status.
func TestServiceCIDRStatus(t *testing.T) {
	ctx := context.Background()
	old := serviceCIDR("10.0.0.0/24")
	old.Labels = map[string]string{"a": "b"}
	obj := serviceCIDR("10.9.0.0/24")
	obj.Labels = map[string]string{"a": "c"}
	obj.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}}
	serviceCIDRStatus.PrepareForUpdate(ctx, obj, old)
	if obj.Spec.CIDRs[0] != "10.0.0.0/24" || obj.Labels["a"] != "b" || len(obj.Status.Conditions) != 1 {
		t.Errorf("after /status: %+v", obj)
	}
	serviceCIDRStrategy{}.PrepareForUpdate(ctx, old, obj)
	if len(old.Status.Conditions) != 1 {
		t.Errorf("the main resource changed status: %+v", old.Status)
	}
}
