package networking

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ipAddress(name string, ref *networkingv1.ParentReference) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Spec: networkingv1.IPAddressSpec{ParentRef: ref}}
}

// TestIPAddressValidation: the name is a canonical IP; the parent
// reference's required parts and immutability are declarative rules,
// reported after the others and without detail.
func TestIPAddressValidation(t *testing.T) {
	ctx := context.Background()
	svc := &networkingv1.ParentReference{Resource: "services", Namespace: "ns", Name: "a"}
	for _, tc := range []struct {
		name     string
		obj, old *networkingv1.IPAddress
		want     string
	}{
		{"valid", ipAddress("10.0.0.1", svc), nil, ""},
		{"not canonical", ipAddress("fd00::01", svc), nil, `metadata.name: Invalid value: "fd00::01": must be in canonical form ("fd00::1")`},
		{"no parent", ipAddress("10.0.0.1", nil), nil, `spec.parentRef: Required value`},
		{"parent missing parts", ipAddress("10.0.0.1", &networkingv1.ParentReference{Group: "Bad_", Namespace: "a/b"}), nil,
			`spec.parentRef.group: Invalid value: "Bad_": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
spec.parentRef.namespace: Invalid value: "a/b": may not contain '/'
spec.parentRef.resource: Required value
spec.parentRef.name: Required value`},
		{"parent changed", ipAddress("10.0.0.1", &networkingv1.ParentReference{Resource: "services", Name: "b"}), ipAddress("10.0.0.1", svc),
			`spec.parentRef: Invalid value: null: field is immutable`},
		{"parent removed", ipAddress("10.0.0.1", nil), ipAddress("10.0.0.1", svc),
			"spec.parentRef: Required value\nspec.parentRef: Invalid value: null: field is immutable"},
		{"labels changed", func() *networkingv1.IPAddress {
			ip := ipAddress("10.0.0.1", svc)
			ip.Labels = map[string]string{"a": "b"}
			return ip
		}(),
			ipAddress("10.0.0.1", svc), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if tc.old == nil {
				got = causes(ipAddressStrategy{}.Validate(ctx, tc.obj))
			} else {
				got = causes(ipAddressStrategy{}.ValidateUpdate(ctx, tc.obj, tc.old))
			}
			if got != tc.want {
				t.Errorf("causes:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	// An IPAddress is named by its address: generateName is the name.
	if got := ipAddresses.NameGenerator("10.0.0.7"); got != "10.0.0.7" {
		t.Errorf("generated name %q", got)
	}
}
