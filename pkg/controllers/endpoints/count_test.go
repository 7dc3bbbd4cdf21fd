package endpoints

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func endpointsOf(subsets ...[]string) *corev1.Endpoints {
	ep := &corev1.Endpoints{}
	for _, addresses := range subsets {
		s := corev1.EndpointSubset{}
		for _, a := range addresses {
			s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: a})
		}
		ep.Subsets = append(ep.Subsets, s)
	}
	return ep
}

func TestCountedAddresses(t *testing.T) {
	tests := []struct {
		name  string
		own   string
		count int
		ep    *corev1.Endpoints
		want  []string
	}{
		{name: "none yet", own: "10.0.0.2", count: 3, ep: endpointsOf(), want: []string{"10.0.0.2"}},
		{name: "joins the others", own: "10.0.0.2", count: 3, ep: endpointsOf([]string{"10.0.0.3", "10.0.0.1"}),
			want: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}},
		{name: "already in", own: "10.0.0.2", count: 2, ep: endpointsOf([]string{"10.0.0.1", "10.0.0.2"}),
			want: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "one too many: the next after its own goes", own: "10.0.0.2", count: 2,
			ep: endpointsOf([]string{"10.0.0.1", "10.0.0.3"}), want: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "the next wraps around", own: "10.0.0.3", count: 2,
			ep: endpointsOf([]string{"10.0.0.1", "10.0.0.2"}), want: []string{"10.0.0.2", "10.0.0.3"}},
		{name: "too many, its own in", own: "10.0.0.1", count: 1,
			ep: endpointsOf([]string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}), want: []string{"10.0.0.1"}},
		{name: "not in the reconcilers' shape: reset", own: "10.0.0.2", count: 3,
			ep: endpointsOf([]string{"10.0.0.1"}, []string{"10.0.0.3"}), want: []string{"10.0.0.2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewCounted(Config{Address: netip.MustParseAddr(tc.own), Port: 6443}, tc.count, nil, nil)
			if got := r.countedAddresses(tc.ep); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCountedConverges: replicas that agree on the count, reconciling in
// turn, end with every one of them listed.
func TestCountedConverges(t *testing.T) {
	ep := endpointsOf([]string{"10.0.0.9", "10.0.0.8", "10.0.0.7"}) // of replicas gone
	replicas := []string{"10.0.0.3", "10.0.0.1", "10.0.0.2"}
	for range 3 {
		for _, own := range replicas {
			r := NewCounted(Config{Address: netip.MustParseAddr(own)}, len(replicas), nil, nil)
			ep = endpointsOf(r.countedAddresses(ep))
		}
	}
	if got := NewCounted(Config{Address: netip.MustParseAddr("10.0.0.1")}, 3, nil, nil).countedAddresses(ep); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}) {
		t.Errorf("after three rounds: %v, want the three replicas", got)
	}
}
