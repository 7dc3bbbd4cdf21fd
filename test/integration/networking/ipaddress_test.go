package networking

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func newService(name, clusterIP string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
}

func newIPAddress(name string, ref *networkingv1.ParentReference) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IPAddressSpec{ParentRef: ref}}
}

// TestIPAddressesOfServices: the addresses the services' allocator takes
// are the IPAddress objects the API serves (a watch sees them come and
// go, with the labels and managed fields kube's allocator leaves), and an
// address a user reserves is taken for services.
func TestIPAddressesOfServices(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client := clientset(t)
	ips := client.NetworkingV1().IPAddresses()
	ctx := context.Background()
	const held, reserved = "10.96.1.10", "10.96.1.11"

	w, err := ips.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + held})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := client.CoreV1().Services(ns).Create(ctx, newService("held", held), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ip := nextEvent(t, w, watch.Added)
	if ref := ip.Spec.ParentRef; ref == nil || *ref != (networkingv1.ParentReference{Resource: "services", Namespace: ns, Name: "held"}) {
		t.Errorf("parentRef %+v", ip.Spec.ParentRef)
	}
	if ip.Labels[networkingv1.LabelIPAddressFamily] != "IPv4" || ip.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" ||
		!slices.Equal(managers(ip), []string{"kube-apiserver Update"}) {
		t.Errorf("labels %v, managers %v", ip.Labels, managers(ip))
	}
	_, rows := table(t, srv, "/apis/networking.k8s.io/v1/ipaddresses?fieldSelector=metadata.name%3D"+held)
	if len(rows) != 1 || fmt.Sprint(rows[0][:2]) != fmt.Sprintf("[%s services/%s/held]", held, ns) {
		t.Errorf("rows %v", rows)
	}

	gw := &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Namespace: ns, Name: "gw"}
	if _, err := ips.Create(ctx, newIPAddress(reserved, gw), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ips.Delete(context.Background(), reserved, metav1.DeleteOptions{}) })
	for _, addr := range []string{held, reserved} {
		_, err := client.CoreV1().Services(ns).Create(ctx, newService("taken", addr), metav1.CreateOptions{})
		wantInvalid(t, err, "Service", fmt.Sprintf(`spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: provided IP is already allocated`, addr, addr))
	}
	if _, err := ips.Create(ctx, newIPAddress(held, gw), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) ||
		err.Error() != fmt.Sprintf(`ipaddresses.networking.k8s.io "%s" already exists`, held) {
		t.Errorf("creating a taken address: %v", err)
	}

	if err := client.CoreV1().Services(ns).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, w, watch.Deleted)
}

// nextEvent returns the IPAddress of w's next event, which must be of
// type want.
func nextEvent(t *testing.T, w watch.Interface, want watch.EventType) *networkingv1.IPAddress {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		ip, isIP := ev.Object.(*networkingv1.IPAddress)
		if !ok || ev.Type != want || !isIP {
			t.Fatalf("event %s %v, want %s", ev.Type, ev.Object, want)
		}
		return ip
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s event", want)
	}
	return nil
}

// TestIPAddressValidation: an IPAddress is named by its address, in
// canonical form (generateName is the name), and its parent never
// changes; its labels may.
func TestIPAddressValidation(t *testing.T) {
	t.Parallel()
	ips := clientset(t).NetworkingV1().IPAddresses()
	ctx := context.Background()
	svc := &networkingv1.ParentReference{Resource: "services", Namespace: "ns", Name: "foo"}
	for _, tc := range []struct {
		ip   *networkingv1.IPAddress
		want []string
	}{
		{newIPAddress("2001:DB8::78", svc), []string{`metadata.name: Invalid value: "2001:DB8::78": must be in canonical form ("2001:db8::78")`}},
		{newIPAddress("192.168.077.2", svc), []string{`metadata.name: Invalid value: "192.168.077.2": must not have leading 0s`}},
		{newIPAddress("10.0.0.0/24", svc), []string{`metadata.name: Invalid value: "10.0.0.0/24": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`}},
		{&networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{GenerateName: "192.168.77."}, Spec: networkingv1.IPAddressSpec{ParentRef: svc}}, []string{
			`metadata.generateName: Invalid value: "192.168.77.": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
			`metadata.name: Invalid value: "192.168.77.": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
		}},
		{newIPAddress("192.168.77.3", nil), []string{"spec.parentRef: Required value"}},
		{newIPAddress("192.168.77.3", &networkingv1.ParentReference{}), []string{"spec.parentRef.resource: Required value", "spec.parentRef.name: Required value"}},
		{newIPAddress("192.168.77.3", &networkingv1.ParentReference{Group: "Bad_", Resource: "a/b", Name: "..", Namespace: "x/y"}), []string{
			"spec.parentRef.group: Invalid value: \"Bad_\": " + notSubdomain,
			`spec.parentRef.resource: Invalid value: "a/b": may not contain '/'`,
			`spec.parentRef.name: Invalid value: "..": may not be '..'`,
			`spec.parentRef.namespace: Invalid value: "x/y": may not contain '/'`,
		}},
	} {
		_, err := ips.Create(ctx, tc.ip, metav1.CreateOptions{})
		wantInvalid(t, err, "IPAddress", tc.want...)
	}

	const addr = "192.168.77.9"
	ip, err := ips.Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{GenerateName: addr}, Spec: networkingv1.IPAddressSpec{ParentRef: svc}}, metav1.CreateOptions{})
	if err != nil || ip.Name != addr {
		t.Fatalf("generated name %q, %v", ip.Name, err)
	}
	t.Cleanup(func() { ips.Delete(context.Background(), addr, metav1.DeleteOptions{}) })
	ip.Labels = map[string]string{"a": "b"}
	if ip, err = ips.Update(ctx, ip, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ip.Spec.ParentRef = &networkingv1.ParentReference{Resource: "services", Namespace: "ns", Name: "bar"}
	_, err = ips.Update(ctx, ip, metav1.UpdateOptions{})
	wantInvalid(t, err, "IPAddress", "spec.parentRef: Invalid value: null: field is immutable")
	ip.Spec.ParentRef = nil
	_, err = ips.Update(ctx, ip, metav1.UpdateOptions{})
	wantInvalid(t, err, "IPAddress", "spec.parentRef: Required value", "spec.parentRef: Invalid value: null: field is immutable")
}
