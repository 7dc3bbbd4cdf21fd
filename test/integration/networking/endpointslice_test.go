package networking

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func newSlice(name string, addressType discoveryv1.AddressType, endpoints []discoveryv1.Endpoint, ports ...discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, AddressType: addressType, Endpoints: endpoints, Ports: ports}
}

func addresses(addrs ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: addrs} }

// TestEndpointSlice: ports default to unnamed TCP; a v1 write drops the
// endpoints' deprecatedTopology; labels count for the generation;
// addressType never changes; no endpoints are stored as null; FQDN slices
// are deprecated; the table is kube's.
func TestEndpointSlice(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client, w := warningClientset(t)
	sliceClient := client.DiscoveryV1().EndpointSlices(ns)
	ctx := context.Background()
	ep := addresses("10.1.2.3")
	ep.NodeName = ptr.To("node-1")
	ep.DeprecatedTopology = map[string]string{corev1.LabelHostname: "node-1"}
	eps, err := sliceClient.Create(ctx, newSlice("web", discoveryv1.AddressTypeIPv4, []discoveryv1.Endpoint{ep, addresses("10.1.2.4", "10.1.2.5")},
		discoveryv1.EndpointPort{Port: ptr.To[int32](80)}, discoveryv1.EndpointPort{Name: ptr.To("https"), Port: ptr.To[int32](443), Protocol: ptr.To(corev1.ProtocolUDP)},
		discoveryv1.EndpointPort{Name: ptr.To("a")}, discoveryv1.EndpointPort{Name: ptr.To("b"), Port: ptr.To[int32](9090)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := eps.Ports[0]; p.Name == nil || *p.Name != "" || *p.Protocol != corev1.ProtocolTCP || *eps.Ports[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("ports %+v", eps.Ports)
	}
	if eps.Endpoints[0].DeprecatedTopology != nil || *eps.Endpoints[0].NodeName != "node-1" || eps.Generation != 1 {
		t.Errorf("endpoint %+v, generation %d", eps.Endpoints[0], eps.Generation)
	}

	eps.Labels = map[string]string{discoveryv1.LabelServiceName: "web"}
	if eps, err = sliceClient.Update(ctx, eps, metav1.UpdateOptions{}); err != nil || eps.Generation != 2 {
		t.Fatalf("labels changed: generation %d, %v", eps.Generation, err)
	}
	eps.AddressType = discoveryv1.AddressTypeIPv6
	_, err = sliceClient.Update(ctx, eps, metav1.UpdateOptions{})
	wantInvalid(t, err, "EndpointSlice", "addressType: Invalid value: null: field is immutable")

	_, rows := table(t, srv, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices")
	if len(rows) != 1 || fmt.Sprint(rows[0][:4]) != "[web IPv4 80,443,a + 1 more... 10.1.2.3,10.1.2.4,10.1.2.5]" {
		t.Errorf("rows %v", rows)
	}

	w.take()
	if _, err := sliceClient.Create(ctx, newSlice("fqdn", discoveryv1.AddressTypeFQDN, []discoveryv1.Endpoint{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.take(); len(got) != 1 || got[0] != "spec.addressType: FQDN endpoints are deprecated" {
		t.Errorf("warnings %q", got)
	}
	body := get(t, srv, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices/fqdn", "application/json")
	if !bytes.Contains(body, []byte(`"endpoints":null`)) || !bytes.Contains(body, []byte(`"ports":null`)) {
		t.Errorf("empty endpoints and ports: %s", body)
	}
	_, rows = table(t, srv, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices?fieldSelector=metadata.name%3Dfqdn")
	if len(rows) != 1 || fmt.Sprint(rows[0][:4]) != "[fqdn FQDN <unset> <unset>]" {
		t.Errorf("rows %v", rows)
	}
}

// TestEndpointSliceValidation: bad slices get kube's causes, the
// declarative ones (addressType, an endpoint's 1 to 100 addresses) last.
func TestEndpointSliceValidation(t *testing.T) {
	t.Parallel()
	eps := clientset(t).DiscoveryV1().EndpointSlices(srv.CreateNamespace(t))
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("10.0.0.%d", i+1)
	}
	bad := addresses("10.0.0.1")
	bad.NodeName, bad.Hostname = ptr.To("Bad_"), ptr.To("Bad_")
	bad.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z"}, {Name: "z"}}}
	for _, tc := range []struct {
		name string
		eps  *discoveryv1.EndpointSlice
		want []string
	}{
		{"no address type", newSlice("a", "", nil), []string{"addressType: Required value"}},
		{"unknown address type", newSlice("a", "Bogus", nil), []string{`addressType: Unsupported value: "Bogus": supported values: "FQDN", "IPv4", "IPv6"`}},
		{"IPv4 addresses", newSlice("a", discoveryv1.AddressTypeIPv4, []discoveryv1.Endpoint{
			addresses(), addresses("foo", "::1", "127.0.0.1", "010.1.2.3"), addresses(tooMany...)}), []string{
			`endpoints[1].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
			`endpoints[1].addresses: Invalid value: "::1": must be an IPv4 address`,
			`endpoints[1].addresses[1]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
			`endpoints[1].addresses[2]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
			`endpoints[1].addresses[3]: Invalid value: "010.1.2.3": must not have leading 0s`,
			"endpoints[0].addresses: Required value",
			"endpoints[2].addresses: Too many: 101: must have at most 100 items",
		}},
		{"IPv6 addresses", newSlice("a", discoveryv1.AddressTypeIPv6, []discoveryv1.Endpoint{addresses("1.2.3.4", "2001:DB8::1", "fe80::1")}), []string{
			`endpoints[0].addresses: Invalid value: "1.2.3.4": must be an IPv6 address`,
			`endpoints[0].addresses[1]: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")`,
			`endpoints[0].addresses[2]: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)`,
		}},
		{"ports", newSlice("a", discoveryv1.AddressTypeIPv4, nil, discoveryv1.EndpointPort{Name: ptr.To("A_B")}, discoveryv1.EndpointPort{Name: ptr.To("x")},
			discoveryv1.EndpointPort{Name: ptr.To("x")}, discoveryv1.EndpointPort{Name: ptr.To("y"), Protocol: ptr.To(corev1.Protocol("ICMP"))}), []string{
			"ports[0].name: Invalid value: \"A_B\": " + notLabel,
			`ports[2].name: Duplicate value: "x"`,
			`ports[3].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
		}},
		{"endpoint fields", newSlice("a", discoveryv1.AddressTypeIPv4, []discoveryv1.Endpoint{bad}), []string{
			"endpoints[0].nodeName: Invalid value: \"Bad_\": " + notSubdomain,
			"endpoints[0].hostname: Invalid value: \"Bad_\": " + notLabel,
			`endpoints[0].hints.forZones[1].name: Duplicate value: "z"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eps.Create(context.Background(), tc.eps, metav1.CreateOptions{})
			wantInvalid(t, err, "EndpointSlice", tc.want...)
		})
	}
	many := make([]discoveryv1.Endpoint, 1001)
	for i := range many {
		many[i] = addresses("10.0.0.1")
	}
	_, err := eps.Create(context.Background(), newSlice("a", discoveryv1.AddressTypeIPv4, many), metav1.CreateOptions{})
	wantInvalid(t, err, "EndpointSlice", "endpoints: Too many: 1001: must have at most 1000 items")
}
