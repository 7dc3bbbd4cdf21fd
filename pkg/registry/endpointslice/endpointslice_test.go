package endpointslice

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func causes(errs field.ErrorList) string {
	var lines []string
	for _, e := range errs {
		lines = append(lines, e.Field+": "+e.ErrorBody())
	}
	return strings.Join(lines, "\n")
}

func slice(addressType discoveryv1.AddressType, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "s", Namespace: "ns", ResourceVersion: "1", Generation: 1},
		AddressType: addressType, Endpoints: endpoints,
	}
}

func endpoint(topologyHost string, addresses ...string) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: addresses}
	if topologyHost != "" {
		ep.DeprecatedTopology = map[string]string{corev1.LabelHostname: topologyHost, "zone": "a"}
	}
	return ep
}

func TestFirstThree(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, "<unset>"},
		{[]string{"80"}, "80"},
		{[]string{"80", "*", "http"}, "80,*,http"},
		{[]string{"1", "2", "3", "4", "5"}, "1,2,3 + 2 more..."},
	} {
		if got := firstThree(tc.items); got != tc.want {
			t.Errorf("firstThree(%q) = %q, want %q", tc.items, got, tc.want)
		}
	}
}

// TestEndpointSliceTopology: v1 writes drop deprecatedTopology, keeping a
// hostname the old endpoints knew as the endpoint's nodeName; an update
// that leaves the endpoints alone keeps them as they are.
func TestEndpointSliceTopology(t *testing.T) {
	ctx := context.Background()
	s := endpointSliceStrategy{}
	created := slice(discoveryv1.AddressTypeIPv4, endpoint("n1", "10.0.0.1"))
	s.PrepareForCreate(ctx, created)
	if ep := created.Endpoints[0]; ep.DeprecatedTopology != nil || ep.NodeName != nil {
		t.Errorf("created: %+v", ep)
	}

	old := slice(discoveryv1.AddressTypeIPv4, endpoint("n1", "10.0.0.1"))
	same := slice(discoveryv1.AddressTypeIPv4, endpoint("n1", "10.0.0.1"))
	s.PrepareForUpdate(ctx, same, old)
	if same.Endpoints[0].DeprecatedTopology == nil || same.Generation != 1 {
		t.Errorf("endpoints left alone: %+v, generation %d", same.Endpoints[0], same.Generation)
	}

	changed := slice(discoveryv1.AddressTypeIPv4, endpoint("n1", "10.0.0.2"), endpoint("n2", "10.0.0.3"))
	s.PrepareForUpdate(ctx, changed, old)
	if ep := changed.Endpoints[0]; ep.DeprecatedTopology != nil || ep.NodeName == nil || *ep.NodeName != "n1" {
		t.Errorf("known host: %+v", ep)
	}
	if ep := changed.Endpoints[1]; ep.DeprecatedTopology != nil || ep.NodeName != nil {
		t.Errorf("unknown host: %+v", ep)
	}
	if changed.Generation != 2 {
		t.Errorf("generation %d, want 2", changed.Generation)
	}
}

// TestEndpointSliceGeneration: labels count, other metadata does not.
func TestEndpointSliceGeneration(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(*discoveryv1.EndpointSlice)
		want   int64
	}{
		{"annotations", func(s *discoveryv1.EndpointSlice) { s.Annotations = map[string]string{"a": "b"} }, 1},
		{"labels", func(s *discoveryv1.EndpointSlice) { s.Labels = map[string]string{"a": "b"} }, 2},
		{"ports", func(s *discoveryv1.EndpointSlice) { s.Ports = []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}} }, 2},
	} {
		obj := slice(discoveryv1.AddressTypeIPv4)
		tc.change(obj)
		endpointSliceStrategy{}.PrepareForUpdate(ctx, obj, slice(discoveryv1.AddressTypeIPv4))
		if obj.Generation != tc.want {
			t.Errorf("%s: generation %d, want %d", tc.name, obj.Generation, tc.want)
		}
	}
}

// TestEndpointSliceValidation: handwritten rules first, then kube 1.37's
// declarative ones without detail; an update may keep the endpoints older
// servers accepted, and never changes addressType.
func TestEndpointSliceValidation(t *testing.T) {
	ctx := context.Background()
	s := endpointSliceStrategy{}
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = "10.0.1.1"
	}
	obj := slice(discoveryv1.AddressTypeIPv4, endpoint("", "::1"), endpoint(""), endpoint("", tooMany...))
	want := `endpoints[0].addresses: Invalid value: "::1": must be an IPv4 address
endpoints[0].addresses[0]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)
endpoints[1].addresses: Required value
endpoints[2].addresses: Too many: 101: must have at most 100 items`
	if got := causes(s.Validate(ctx, obj)); got != want {
		t.Errorf("create:\n%s\nwant:\n%s", got, want)
	}
	old := slice(discoveryv1.AddressTypeIPv4, endpoint("", "::1"))
	if got := causes(s.ValidateUpdate(ctx, slice(discoveryv1.AddressTypeIPv4, endpoint("", "::1")), old)); got != "" {
		t.Errorf("update keeping the endpoints: %s", got)
	}
	if got, want := causes(s.ValidateUpdate(ctx, slice(discoveryv1.AddressTypeIPv6, endpoint("", "::1")), old)),
		"addressType: Invalid value: null: field is immutable"; got != want {
		t.Errorf("update of addressType:\n%s\nwant:\n%s", got, want)
	}
}

func TestValidateHints(t *testing.T) {
	zones := func(names ...string) []discoveryv1.ForZone {
		var out []discoveryv1.ForZone
		for _, n := range names {
			out = append(out, discoveryv1.ForZone{Name: n})
		}
		return out
	}
	p := field.NewPath("hints")
	hints := &discoveryv1.EndpointHints{ForZones: zones("a", "b", "a"), ForNodes: []discoveryv1.ForNode{{Name: "n"}, {Name: "Bad_"}}}
	want := `hints.forZones[2].name: Duplicate value: "a"
hints.forNodes[1].name: Invalid value: "Bad_": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	if got := causes(validateHints(hints, p)); got != want {
		t.Errorf("causes:\n%s\nwant:\n%s", got, want)
	}
	// Too many zones: nodes are not looked at.
	hints = &discoveryv1.EndpointHints{ForZones: zones("1", "2", "3", "4", "5", "6", "7", "8", "9"), ForNodes: []discoveryv1.ForNode{{Name: "Bad_"}}}
	if got, want := causes(validateHints(hints, p)), "hints.forZones: Too many: 9: must have at most 8 items"; got != want {
		t.Errorf("causes: %s, want %s", got, want)
	}
}
