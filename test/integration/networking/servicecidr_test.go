package networking

import (
	"context"
	"fmt"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestDefaultServiceCIDR: the server creates the default ServiceCIDR from
// --service-cluster-ip-range as kube-apiserver does: its range, created
// by kube-apiserver, made Ready by kube's controller through an apply of
// its status.
func TestDefaultServiceCIDR(t *testing.T) {
	t.Parallel()
	sc, err := clientset(t).NetworkingV1().ServiceCIDRs().Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sc.Spec.CIDRs, []string{serviceRange}) || sc.Generation != 0 || len(sc.Finalizers) != 0 {
		t.Errorf("default ServiceCIDR: %+v", sc)
	}
	if cs := sc.Status.Conditions; len(cs) != 1 || cs[0].Type != "Ready" || cs[0].Status != metav1.ConditionTrue ||
		cs[0].Message != "Kubernetes default Service CIDR is ready" || cs[0].Reason != "" {
		t.Errorf("conditions %+v", cs)
	}
	if got := managers(sc); !slices.Equal(got, []string{"kubernetes-service-cidr-controller Apply status", "kube-apiserver Update"}) {
		t.Errorf("managers %v", got)
	}
	_, rows := table(t, srv, "/apis/networking.k8s.io/v1/servicecidrs?fieldSelector=metadata.name%3Dkubernetes")
	if len(rows) != 1 || fmt.Sprint(rows[0][:2]) != "[kubernetes "+serviceRange+"]" {
		t.Errorf("rows %v", rows)
	}
}

// TestServiceCIDRs: services take addresses from any ready ServiceCIDR,
// not from one made not Ready (through /status, which changes only
// status) nor from one deleted; a status sent on create is dropped; a
// single-stack ServiceCIDR may become dual-stack.
func TestServiceCIDRs(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client := clientset(t)
	cidrs := client.NetworkingV1().ServiceCIDRs()
	services := client.CoreV1().Services(ns)
	ctx := context.Background()
	name := testserver.NamespaceName(t)
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.200.0.0/24"}}}
	sc.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Sent", LastTransitionTime: metav1.Now()}}
	sc, err := cidrs.Create(ctx, sc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cidrs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if len(sc.Status.Conditions) != 0 {
		t.Errorf("status sent on create kept: %+v", sc.Status)
	}
	if _, err := services.Create(ctx, newService("in-range", "10.200.0.5"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a service in the new range: %v", err)
	}

	sc.Spec.CIDRs = []string{"10.201.0.0/24"} // ignored by /status
	sc.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Test", LastTransitionTime: metav1.Now()}}
	if sc, err = cidrs.UpdateStatus(ctx, sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if sc.Spec.CIDRs[0] != "10.200.0.0/24" || len(sc.Status.Conditions) != 1 {
		t.Errorf("after /status: %+v", sc)
	}
	mismatch := func(ip string) string {
		return fmt.Sprintf(`spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: the provided network does not match the current range`, ip, ip)
	}
	_, err = services.Create(ctx, newService("not-ready", "10.200.0.6"), metav1.CreateOptions{})
	wantInvalid(t, err, "Service", mismatch("10.200.0.6"))

	sc.Spec.CIDRs = append(sc.Spec.CIDRs, "fd00:200::/64")
	if sc, err = cidrs.Update(ctx, sc, metav1.UpdateOptions{}); err != nil || len(sc.Spec.CIDRs) != 2 {
		t.Fatalf("to dual-stack: %+v, %v", sc, err)
	}
	sc.Spec.CIDRs = []string{"10.202.0.0/24", "fd00:200::/64"}
	_, err = cidrs.Update(ctx, sc, metav1.UpdateOptions{})
	wantInvalid(t, err, "ServiceCIDR", `spec.cidrs[0]: Invalid value: "10.202.0.0/24": field is immutable`)

	if err := cidrs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = services.Create(ctx, newService("deleted", "10.200.0.7"), metav1.CreateOptions{})
	wantInvalid(t, err, "Service", mismatch("10.200.0.7"))
}

// TestServiceCIDRValidation: bad ServiceCIDRs get kube's causes.
func TestServiceCIDRValidation(t *testing.T) {
	t.Parallel()
	cidrs := clientset(t).NetworkingV1().ServiceCIDRs()
	name := testserver.NamespaceName(t)
	for _, tc := range []struct {
		cidrs []string
		want  []string
	}{
		{nil, []string{"spec.cidrs: Required value: at least one CIDR required"}},
		{[]string{"10.0.0.0/24", "fd00::/64", "10.1.0.0/24"},
			[]string{`spec.cidrs: Invalid value: {"CIDRs":["10.0.0.0/24","fd00::/64","10.1.0.0/24"]}: may only hold up to 2 values`}},
		{[]string{"10.0.0.0/33", "10.0.0.1/24"}, []string{
			`spec.cidrs[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
			`spec.cidrs[1]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length`,
		}},
		{[]string{"fd00::/64", "FD01::/64"}, []string{
			`spec.cidrs[1]: Invalid value: "FD01::/64": must be in canonical form ("fd01::/64")`,
			`spec.cidrs: Invalid value: ["fd00::/64","FD01::/64"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`,
		}},
	} {
		_, err := cidrs.Create(context.Background(), &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: tc.cidrs}}, metav1.CreateOptions{})
		wantInvalid(t, err, "ServiceCIDR", tc.want...)
	}
}
