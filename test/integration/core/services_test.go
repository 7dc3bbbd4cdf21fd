package core

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var serviceCIDR = netip.MustParsePrefix(serviceRange)

func port(name string, p int32) corev1.ServicePort { return corev1.ServicePort{Name: name, Port: p} }

func createService(t *testing.T, ns, name string, spec corev1.ServiceSpec) *corev1.Service {
	t.Helper()
	svc, err := clientset(t).CoreV1().Services(ns).Create(context.Background(),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating service %s: %v", name, err)
	}
	return svc
}

func wantClusterIP(t *testing.T, svc *corev1.Service) netip.Addr {
	t.Helper()
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil || !serviceCIDR.Contains(ip) || ip == serviceCIDR.Addr() || len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP {
		t.Fatalf("clusterIP %q clusterIPs %q: want one usable address of %s", svc.Spec.ClusterIP, svc.Spec.ClusterIPs, serviceRange)
	}
	return ip
}

func wantNodePort(t *testing.T, p int32) {
	t.Helper()
	if p < 30000 || p > 32767 {
		t.Errorf("nodePort %d outside 30000-32767", p)
	}
}

func TestServiceDefaults(t *testing.T) {
	ns := namespace(t)
	single, requireDual := corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyRequireDualStack
	cluster := corev1.ServiceInternalTrafficPolicyCluster
	cases := []struct {
		name string
		spec corev1.ServiceSpec
		want func(t *testing.T, svc *corev1.Service)
	}{
		{"clusterip", corev1.ServiceSpec{Ports: []corev1.ServicePort{port("", 80)}, Selector: map[string]string{"app": "a"}},
			func(t *testing.T, svc *corev1.Service) {
				wantClusterIP(t, svc)
				s := svc.Spec
				if s.Type != corev1.ServiceTypeClusterIP || s.SessionAffinity != corev1.ServiceAffinityNone || *s.IPFamilyPolicy != single ||
					len(s.IPFamilies) != 1 || s.IPFamilies[0] != corev1.IPv4Protocol || *s.InternalTrafficPolicy != cluster ||
					s.ExternalTrafficPolicy != "" || s.AllocateLoadBalancerNodePorts != nil {
					t.Errorf("spec: %+v", s)
				}
				if p := s.Ports[0]; p.Protocol != corev1.ProtocolTCP || p.TargetPort != intstr.FromInt32(80) || p.NodePort != 0 {
					t.Errorf("port: %+v", p)
				}
			}},
		{"nodeport", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{
			{Name: "a", Port: 80, TargetPort: intstr.FromString("http")}, {Name: "b", Port: 81, Protocol: corev1.ProtocolUDP}}},
			func(t *testing.T, svc *corev1.Service) {
				wantClusterIP(t, svc)
				if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
					t.Errorf("externalTrafficPolicy %q", svc.Spec.ExternalTrafficPolicy)
				}
				a, b := svc.Spec.Ports[0], svc.Spec.Ports[1]
				wantNodePort(t, a.NodePort)
				wantNodePort(t, b.NodePort)
				if a.NodePort == b.NodePort || a.TargetPort != intstr.FromString("http") || b.TargetPort != intstr.FromInt32(81) {
					t.Errorf("ports: %+v", svc.Spec.Ports)
				}
			}},
		{"loadbalancer local", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			Ports: []corev1.ServicePort{port("a", 80)}},
			func(t *testing.T, svc *corev1.Service) {
				wantClusterIP(t, svc)
				wantNodePort(t, svc.Spec.Ports[0].NodePort)
				wantNodePort(t, svc.Spec.HealthCheckNodePort)
				if a := svc.Spec.AllocateLoadBalancerNodePorts; a == nil || !*a || svc.Spec.HealthCheckNodePort == svc.Spec.Ports[0].NodePort {
					t.Errorf("spec: %+v", svc.Spec)
				}
			}},
		{"headless without selector", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{port("a", 80)}},
			func(t *testing.T, svc *corev1.Service) {
				// kube makes these dual-stack even on a single-stack cluster.
				s := svc.Spec
				if s.ClusterIP != "None" || len(s.ClusterIPs) != 1 || *s.IPFamilyPolicy != requireDual ||
					fmt.Sprint(s.IPFamilies) != "[IPv4 IPv6]" {
					t.Errorf("spec: %+v", s)
				}
			}},
		{"headless with selector", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{port("a", 80)}},
			func(t *testing.T, svc *corev1.Service) {
				if s := svc.Spec; *s.IPFamilyPolicy != single || fmt.Sprint(s.IPFamilies) != "[IPv4]" {
					t.Errorf("spec: %+v", s)
				}
			}},
		{"externalname", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
			func(t *testing.T, svc *corev1.Service) {
				s := svc.Spec
				if s.ClusterIP != "" || s.ClusterIPs != nil || s.IPFamilies != nil || s.IPFamilyPolicy != nil || s.InternalTrafficPolicy != nil ||
					s.SessionAffinity != corev1.ServiceAffinityNone {
					t.Errorf("spec: %+v", s)
				}
			}},
		{"client ip affinity", corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP, Ports: []corev1.ServicePort{port("", 80)}},
			func(t *testing.T, svc *corev1.Service) {
				if c := svc.Spec.SessionAffinityConfig; c == nil || *c.ClientIP.TimeoutSeconds != 10800 {
					t.Errorf("sessionAffinityConfig: %+v", c)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			svc := createService(t, ns, name, tc.spec)
			tc.want(t, svc)
			if svc.Generation != 0 {
				t.Errorf("generation %d: services do not track it", svc.Generation)
			}
			// The status is written out even when empty, as kube does.
			r := do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/services/"+name, nil)
			if !strings.Contains(string(r.body), `"status":{"loadBalancer":{}}`) {
				t.Errorf("status: %s", r.body)
			}
		})
	}
}

func TestServiceClusterIPs(t *testing.T) {
	ns := namespace(t)
	svcs := clientset(t).CoreV1().Services(ns)
	ctx := context.Background()
	first := createService(t, ns, "first", corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{port("", 80)}})
	if first.Spec.ClusterIP != "10.96.0.10" || first.Spec.ClusterIPs[0] != "10.96.0.10" {
		t.Fatalf("requested IP not given: %+v", first.Spec)
	}
	mk := func(name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{port("", 80)}}}
	}
	cases := []struct{ name, ip, want string }{
		{"taken", "10.96.0.10", `spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated`},
		{"outside", "10.97.0.1", `spec.clusterIPs: Invalid value: ["10.97.0.1"]: failed to allocate IP 10.97.0.1: the provided network does not match the current range`},
		{"network", "10.96.0.0", `spec.clusterIPs: Invalid value: ["10.96.0.0"]: failed to allocate IP 10.96.0.0: the provided network does not match the current range`},
		{"broadcast", "10.96.0.255", `spec.clusterIPs: Invalid value: ["10.96.0.255"]: failed to allocate IP 10.96.0.255: the provided network does not match the current range`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svcs.Create(ctx, mk("s-"+tc.name, tc.ip), metav1.CreateOptions{})
			wantInvalid(t, err, tc.want)
		})
	}
	t.Run("immutable", func(t *testing.T) {
		got, err := svcs.Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Spec.ClusterIP, got.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
		_, err = svcs.Update(ctx, got, metav1.UpdateOptions{})
		wantInvalid(t, err, `spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set`)
	})
	t.Run("kept by an update that leaves it out", func(t *testing.T) {
		// kubectl replace of the original manifest, without clusterIP.
		upd := mk("first", "")
		upd.Spec.Selector = map[string]string{"app": "x"}
		got, err := svcs.Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil || got.Spec.ClusterIP != "10.96.0.10" {
			t.Fatalf("update: %v %+v", err, got)
		}
	})
	t.Run("released on delete", func(t *testing.T) {
		if err := svcs.Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := svcs.Create(ctx, mk("second", "10.96.0.10"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("the IP of a deleted service is not free again: %v", err)
		}
	})
	t.Run("released by a change to ExternalName", func(t *testing.T) {
		patch := `{"spec":{"type":"ExternalName","externalName":"example.com"}}`
		got, err := svcs.Patch(ctx, "second", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil || got.Spec.ClusterIP != "" || got.Spec.IPFamilies != nil {
			t.Fatalf("patch: %v %+v", err, got)
		}
		if _, err := svcs.Create(ctx, mk("third", "10.96.0.10"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("the IP given up is not free again: %v", err)
		}
	})
	t.Run("dry run reserves nothing", func(t *testing.T) {
		got, err := svcs.Create(ctx, mk("dry", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		// kube answers a dry run with the network address.
		if err != nil || got.Spec.ClusterIP != "10.96.0.0" {
			t.Fatalf("dry run: %v %+v", err, got)
		}
		got, err = svcs.Create(ctx, mk("dry2", "10.96.0.12"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || got.Spec.ClusterIP != "10.96.0.12" {
			t.Fatalf("dry run: %v %+v", err, got)
		}
		if _, err := svcs.Create(ctx, mk("after-dry", "10.96.0.12"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("a dry run reserved 10.96.0.12: %v", err)
		}
	})
	t.Run("failed create gives it back", func(t *testing.T) {
		bad := mk("bad", "10.96.0.13")
		bad.Spec.Ports[0].Protocol = "FOO"
		if _, err := svcs.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Fatalf("want 422, got %v", err)
		}
		if _, err := svcs.Create(ctx, mk("good", "10.96.0.13"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("an invalid service kept its IP: %v", err)
		}
	})
}

func TestServiceNodePorts(t *testing.T) {
	ns := namespace(t)
	svcs := clientset(t).CoreV1().Services(ns)
	ctx := context.Background()
	np := func(name string, nodePort int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Name: "a", Port: 80, NodePort: nodePort}}}}
	}
	if _, err := svcs.Create(ctx, np("a", 30100), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := svcs.Create(ctx, np("b", 30100), metav1.CreateOptions{})
	wantInvalid(t, err, "spec.ports[0].nodePort: Invalid value: 30100: provided port is already allocated")
	_, err = svcs.Create(ctx, np("c", 20000), metav1.CreateOptions{})
	wantInvalid(t, err, "spec.ports[0].nodePort: Invalid value: 20000: provided port is not in the valid range. The range of valid ports is 30000-32767")
	_, err = svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Port: 80, NodePort: 30200}}}}, metav1.CreateOptions{})
	wantInvalid(t, err, "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'")

	t.Run("same port number shares the node port", func(t *testing.T) {
		dns := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dns"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Name: "tcp", Port: 53}, {Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP}}}}
		got, err := svcs.Create(ctx, dns, metav1.CreateOptions{})
		if err != nil || got.Spec.Ports[0].NodePort == 0 || got.Spec.Ports[0].NodePort != got.Spec.Ports[1].NodePort {
			t.Fatalf("create: %v %+v", err, got)
		}
	})
	t.Run("released when the type no longer needs it", func(t *testing.T) {
		got, err := svcs.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"type":"ClusterIP"}}`), metav1.PatchOptions{})
		if err != nil || got.Spec.Ports[0].NodePort != 0 || got.Spec.ExternalTrafficPolicy != "" {
			t.Fatalf("patch: %v %+v", err, got)
		}
		if _, err := svcs.Create(ctx, np("b", 30100), metav1.CreateOptions{}); err != nil {
			t.Fatalf("node port not released: %v", err)
		}
	})
	t.Run("allocated again when it does", func(t *testing.T) {
		got, err := svcs.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"type":"LoadBalancer"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantNodePort(t, got.Spec.Ports[0].NodePort)
		if got.Spec.Ports[0].NodePort == 30100 {
			t.Errorf("got the node port of service b")
		}
	})
	t.Run("released on delete", func(t *testing.T) {
		if err := svcs.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := svcs.Create(ctx, np("e", 30100), metav1.CreateOptions{}); err != nil {
			t.Fatalf("node port not released on delete: %v", err)
		}
	})
	t.Run("released by deletecollection", func(t *testing.T) {
		// client-go has no DeleteCollection for services (kube added the
		// verb later): a raw request.
		if r := do(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/services", nil); r.code != http.StatusOK {
			t.Fatalf("deletecollection: %d %s", r.code, r.body)
		}
		if _, err := svcs.Create(ctx, np("f", 30100), metav1.CreateOptions{}); err != nil {
			t.Fatalf("node port not released by deletecollection: %v", err)
		}
	})
}

// TestServiceConcurrentCreates creates services at once and checks that
// no cluster IP or node port is handed out twice.
func TestServiceConcurrentCreates(t *testing.T) {
	ns := namespace(t)
	svcs := clientset(t).CoreV1().Services(ns)
	const n = 40
	var wg sync.WaitGroup
	errs := make([]error, n)
	got := make([]*corev1.Service, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)}, Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}}
			got[i], errs[i] = svcs.Create(context.Background(), svc, metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	ips, ports := map[string]string{}, map[int32]string{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		svc := got[i]
		wantClusterIP(t, svc)
		if other, dup := ips[svc.Spec.ClusterIP]; dup {
			t.Errorf("%s and %s both got %s", other, svc.Name, svc.Spec.ClusterIP)
		}
		ips[svc.Spec.ClusterIP] = svc.Name
		for _, p := range svc.Spec.Ports {
			if other, dup := ports[p.NodePort]; dup {
				t.Errorf("%s and %s both got node port %d", other, svc.Name, p.NodePort)
			}
			ports[p.NodePort] = svc.Name
		}
	}
	// Dynamic allocation keeps to the upper part of the range while it
	// has room (the first 16 addresses are for requests).
	for ip := range ips {
		if a := netip.MustParseAddr(ip); a.Less(netip.MustParseAddr("10.96.0.17")) {
			t.Errorf("dynamic address %s in the static part", ip)
		}
	}
}

func TestServiceStatus(t *testing.T) {
	ns := namespace(t)
	svcs := clientset(t).CoreV1().Services(ns)
	ctx := context.Background()
	createService(t, ns, "lb", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{port("a", 80)}})

	// The main resource ignores status.
	svc, _ := svcs.Get(ctx, "lb", metav1.GetOptions{})
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}
	upd, err := svcs.Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil || len(upd.Status.LoadBalancer.Ingress) != 0 {
		t.Fatalf("update: %v %+v", err, upd)
	}
	// /status changes only status (and defaults the ingress' ipMode).
	svc.ResourceVersion = upd.ResourceVersion
	svc.Spec.Selector = map[string]string{"ignored": "yes"}
	st, err := svcs.UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	if err != nil || st.Spec.Selector != nil || len(st.Status.LoadBalancer.Ingress) != 1 ||
		st.Status.LoadBalancer.Ingress[0].IPMode == nil || *st.Status.LoadBalancer.Ingress[0].IPMode != corev1.LoadBalancerIPModeVIP {
		t.Fatalf("update status: %v %+v", err, st)
	}
	_, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/services/lb")
	if rows[0][3] != "1.2.3.4" {
		t.Errorf("EXTERNAL-IP %v", rows[0][3])
	}
	// A status that does not fit the type is refused.
	bad := st.DeepCopy()
	bad.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4", IPMode: ptr(corev1.LoadBalancerIPMode("Foo"))}}
	_, err = svcs.UpdateStatus(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, err, `status.loadBalancer.ingress[0].ipMode: Unsupported value: "Foo": supported values: "Proxy", "VIP"`)
	// Leaving LoadBalancer drops its status.
	cip, err := svcs.Patch(ctx, "lb", types.MergePatchType, []byte(`{"spec":{"type":"ClusterIP"}}`), metav1.PatchOptions{})
	if err != nil || len(cip.Status.LoadBalancer.Ingress) != 0 || cip.Spec.AllocateLoadBalancerNodePorts != nil {
		t.Fatalf("patch: %v %+v", err, cip)
	}
}

func TestServiceValidation(t *testing.T) {
	ns := namespace(t)
	svcs := clientset(t).CoreV1().Services(ns)
	cases := []struct {
		name string
		spec corev1.ServiceSpec
		want []string
	}{
		{"no ports", corev1.ServiceSpec{}, []string{"spec.ports: Required value"}},
		{"port names", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}, {Name: "b", Port: 0}, {Name: "b", Port: 82, Protocol: "X"}}},
			[]string{
				"spec.ports[0].name: Required value",
				"spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
				"spec.ports[1].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
				`spec.ports[2].name: Duplicate value: "b"`,
				`spec.ports[2].protocol: Unsupported value: "X": supported values: "SCTP", "TCP", "UDP"`,
			}},
		{"dual stack", corev1.ServiceSpec{IPFamilyPolicy: ptr(corev1.IPFamilyPolicyRequireDualStack), Ports: []corev1.ServicePort{port("", 80)}},
			[]string{`spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`}},
		{"ipv6", corev1.ServiceSpec{IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol}, Ports: []corev1.ServicePort{port("", 80)}},
			[]string{`spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`}},
		{"externalname", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}, []string{"spec.externalName: Required value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svcs.Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "v"}, Spec: tc.spec}, metav1.CreateOptions{})
			wantInvalid(t, err, tc.want...)
		})
	}
	t.Run("names are DNS labels", func(t *testing.T) {
		_, err := svcs.Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a.b"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{port("", 80)}}}, metav1.CreateOptions{})
		wantInvalid(t, err, `metadata.name: Invalid value: "a.b": must not contain dots`)
		// kube 1.37 lets them start with a digit.
		createService(t, ns, "1svc", corev1.ServiceSpec{Ports: []corev1.ServicePort{port("", 80)}})
	})
}

func TestServiceSelectorsAndTable(t *testing.T) {
	ns := namespace(t)
	createService(t, ns, "c", corev1.ServiceSpec{Ports: []corev1.ServicePort{port("", 80)}, Selector: map[string]string{"app": "x"}})
	// The node port is allocated (a fixed one could collide with a
	// parallel test's allocation); the table shows it.
	nodePort := createService(t, ns, "n", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "a", Port: 80}}}).Spec.Ports[0].NodePort
	createService(t, ns, "h", corev1.ServiceSpec{ClusterIP: "None", Ports: []corev1.ServicePort{port("", 80)}})
	createService(t, ns, "e", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"})
	cases := []struct{ selector, want string }{
		{"spec.type=NodePort", "n"},
		{"spec.clusterIP=None", "h"},
		{"spec.clusterIP=,metadata.name!=x", "e"},
	}
	for _, tc := range cases {
		list, err := clientset(t).CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{FieldSelector: tc.selector})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != tc.want {
			t.Errorf("%s: %v %v", tc.selector, err, list)
		}
	}
	r := do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/services?fieldSelector=spec.ports%3D1", nil)
	if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), `field label not supported: spec.ports`) {
		t.Errorf("unknown field: %d %s", r.code, r.body)
	}
	columns, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/services")
	if got := strings.Join(columns, ","); got != "Name,Type,Cluster-IP,External-IP,Port(s),Age,Selector(wide)" {
		t.Errorf("columns %s", got)
	}
	want := map[string]string{
		"c": "ClusterIP <none> 80/TCP app=x",
		"n": fmt.Sprintf("NodePort <none> 80:%d/TCP <none>", nodePort),
		"h": "ClusterIP None <none> 80/TCP <none>",
		"e": "ExternalName <none> example.com <none> <none>",
	}
	for _, row := range rows {
		name := row[0].(string)
		cells := []string{fmt.Sprint(row[1])}
		if ip := fmt.Sprint(row[2]); ip == "None" || ip == "<none>" {
			cells = append(cells, ip)
		}
		cells = append(cells, fmt.Sprint(row[3]), fmt.Sprint(row[4]), fmt.Sprint(row[6]))
		if got := strings.Join(cells, " "); got != want[name] {
			t.Errorf("row %s: got %q, want %q", name, got, want[name])
		}
	}
}

// TestKubernetesService checks the service kube-apiserver creates at
// start: default/kubernetes on the first address of the range, port 443 to
// the server's port.
func TestKubernetesService(t *testing.T) {
	svc, err := clientset(t).CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "https://"), ":")
	p := svc.Spec.Ports[0]
	if svc.Spec.ClusterIP != "10.96.0.1" || p.Name != "https" || p.Port != 443 || p.TargetPort.String() != port ||
		svc.Labels["component"] != "apiserver" || svc.Labels["provider"] != "kubernetes" {
		t.Errorf("kubernetes service: %+v", svc)
	}
}
