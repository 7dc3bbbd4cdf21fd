package nodeproxy

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestServiceProxy passes requests through services/proxy to a ready
// endpoint of the service whose address is its pod's IP, at the port
// named or numbered as kube reads [scheme:]name[:port].
func TestServiceProxy(t *testing.T) {
	t.Parallel()
	needRemote(t) // EndpointSlices may not hold loopback addresses
	ns := srv.CreateNamespace(t)
	ctx := context.Background()
	cs := clientset(t)
	ip := globalUnicastIP()
	addr := serveHTTP(t, ip)
	createPod(t, ns, "backend", kubeletNode(t, kubelet), ip.String(), containers("web")...)
	createPod(t, ns, "impostor", kubeletNode(t, kubelet), "192.0.2.9", containers("web")...)
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "front"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	endpoint := func(ip, pod string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod}}
	}
	port := int32(addr.Port)
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "front-1", Labels: map[string]string{discoveryv1.LabelServiceName: "front"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: &port}},
		// Only the first is ready with its pod's address: nothing listens
		// at the others'.
		Endpoints: []discoveryv1.Endpoint{endpoint(ip.String(), "backend", true), endpoint("192.0.2.2", "backend", false),
			endpoint("192.0.2.3", "impostor", true)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/namespaces/" + ns + "/services/"
	for i := 0; i < 5; i++ { // the endpoint is chosen at random
		for path, want := range map[string]string{
			base + "front:http/proxy/x?y=1": "PUT /x?y=1",
			base + "http:front:80/proxy/a/": "PUT /a/",
		} {
			if code, body := http1(t, "PUT", path); code != 200 || body != want {
				t.Errorf("PUT %s = %d %q, want 200 %q", path, code, body, want)
			}
		}
	}
	// Without a port, the port named "" is meant: the service has none.
	if code, body := http1(t, "GET", base+"front/proxy/"); code != 503 || !strings.Contains(body, `no endpoints available for service \"front\"`) {
		t.Errorf("GET services/front/proxy/ = %d %q, want kube's 503", code, body)
	}
}
