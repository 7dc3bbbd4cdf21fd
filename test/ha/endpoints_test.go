package ha

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestKubernetesEndpointsListLiveReplicas checks kube's lease endpoint
// reconciler across replicas: each holds a Lease apiserver-<id> in
// kube-system, and the endpoints of the kubernetes Service list every
// live replica on the secure port, and so does its EndpointSlice (kept
// by every replica, re-created when deleted: kube's conformance test
// "should have Endpoints and EndpointSlices pointing to API Server"); a
// replica that joins is added, and one stopped gracefully removes its
// lease and its address.
func TestKubernetesEndpointsListLiveReplicas(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	client := shared.clients[0]
	var want []string
	for i := range replicas {
		want = append(want, advertisedAddress(i))
	}
	waitForEndpoints(ctx, t, want)
	leases, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "apiserver.kubernetes.io/identity=kube-apiserver"})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) < replicas {
		t.Errorf("%d apiserver leases in kube-system, want one per replica (%d)", len(leases.Items), replicas)
	}
	for _, l := range leases.Items {
		checkLease(t, &l)
	}

	// The slice is kept as the endpoints are: one deleted comes back.
	if err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForEndpoints(ctx, t, want)

	// A fourth replica joins, then stops gracefully.
	extra, _, err := shared.startReplica(filepath.Join(t.TempDir(), "replica"), replicas)
	if err != nil {
		t.Fatal(err)
	}
	waitForEndpoints(ctx, t, append(slices.Clone(want), advertisedAddress(replicas)))
	extra.Server.Stop()
	waitForEndpoints(ctx, t, want)
	all, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != len(leases.Items) {
		t.Errorf("after the replica stopped, %d leases in kube-system, want %d (its lease deleted)", len(all.Items), len(leases.Items))
	}
}

func checkLease(t *testing.T, l *coordinationv1.Lease) {
	t.Helper()
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != l.Name || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		t.Errorf("lease %s: holder, renew time and duration must be set: %+v", l.Name, l.Spec)
	}
}

// waitForEndpoints waits (bounded) until the endpoints of the kubernetes
// Service, and its EndpointSlice, read through every replica, list
// exactly addresses on the replicas' port.
func waitForEndpoints(ctx context.Context, t *testing.T, addresses []string) {
	t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, client := range shared.clients {
			ep, err := client.CoreV1().Endpoints(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				last = []string{err.Error()}
				return false, nil
			}
			if last = endpointAddresses(ep); !slices.Equal(last, addresses) {
				return false, nil
			}
			slice, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				last = []string{"endpoint slice: " + err.Error()}
				return false, nil
			}
			if last = sliceAddresses(slice); !slices.Equal(last, addresses) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the kubernetes endpoints list %v, want %v on port %d", last, addresses, shared.port)
	}
}

// sliceAddresses are the ready addresses of the kubernetes EndpointSlice
// on the replicas' port, when it is the slice kube's EndpointsAdapter
// writes: the service-name label alone, IPv4, port "https"/TCP.
func sliceAddresses(s *discoveryv1.EndpointSlice) []string {
	if !maps.Equal(s.Labels, map[string]string{discoveryv1.LabelServiceName: "kubernetes"}) || s.AddressType != discoveryv1.AddressTypeIPv4 {
		return []string{fmt.Sprintf("labels %v, address type %s", s.Labels, s.AddressType)}
	}
	if len(s.Ports) != 1 || s.Ports[0].Port == nil || int(*s.Ports[0].Port) != shared.port || s.Ports[0].Name == nil ||
		*s.Ports[0].Name != "https" || s.Ports[0].Protocol == nil || *s.Ports[0].Protocol != corev1.ProtocolTCP {
		return []string{fmt.Sprintf("ports %v", s.Ports)}
	}
	var out []string
	for _, e := range s.Endpoints {
		if e.Conditions.Ready == nil || !*e.Conditions.Ready {
			return []string{fmt.Sprintf("endpoint %v not ready", e.Addresses)}
		}
		out = append(out, e.Addresses...)
	}
	slices.Sort(out)
	return out
}

// endpointAddresses are the addresses of ep on the replicas' port.
func endpointAddresses(ep *corev1.Endpoints) []string {
	var out []string
	for _, s := range ep.Subsets {
		if len(s.Ports) != 1 || int(s.Ports[0].Port) != shared.port || s.Ports[0].Name != "https" {
			return []string{fmt.Sprintf("ports %v", s.Ports)}
		}
		for _, a := range s.Addresses {
			out = append(out, a.IP)
		}
	}
	slices.Sort(out)
	return out
}
