package networking

import (
	"context"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// causes renders errs as "field: message" lines, as the tests state them.
func causes(errs field.ErrorList) string {
	var lines []string
	for _, e := range errs {
		lines = append(lines, e.Field+": "+e.ErrorBody())
	}
	return strings.Join(lines, "\n")
}

func TestIngressHosts(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		var out []networkingv1.IngressRule
		for _, h := range hosts {
			out = append(out, networkingv1.IngressRule{Host: h})
		}
		return out
	}
	for _, tc := range []struct {
		rules []networkingv1.IngressRule
		want  string
	}{
		{nil, "*"},
		{rules("", ""), "*"},
		{rules("a", "", "c"), "a,c"},
		{rules("a", "b", "c"), "a,b,c"},
		// kube counts the rules left out as all rules but three, hostless
		// ones included.
		{rules("a", "", "b", "c", "", "d"), "a,b,c + 3 more..."},
		{rules("", "", "", "", "a"), "a"},
	} {
		if got := ingressHosts(tc.rules); got != tc.want {
			t.Errorf("ingressHosts(%v) = %q, want %q", tc.rules, got, tc.want)
		}
	}
}

func TestIngressAddresses(t *testing.T) {
	s := networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{
		{IP: "10.0.0.2", Hostname: "ignored.example.com"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}, {IP: "10.0.0.2"}, {},
	}}
	if got, want := ingressAddresses(s), "10.0.0.1,10.0.0.2,lb.example.com"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func ingressWith(spec networkingv1.IngressSpec) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: "ns", ResourceVersion: "1"}, Spec: spec}
}

// TestIngressUpdateKeepsOldValues: what older servers accepted (a TLS
// secret name that is not a DNS subdomain, invalid rules under a wildcard
// host) may stay through updates, and only then.
func TestIngressUpdateKeepsOldValues(t *testing.T) {
	backend := &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	badTLS := networkingv1.IngressSpec{DefaultBackend: backend, TLS: []networkingv1.IngressTLS{{SecretName: "Bad_Secret"}}}
	wildcard := networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "*.example.com",
		IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{}}}}}
	s := ingressStrategy{}
	ctx := context.Background()
	for _, spec := range []networkingv1.IngressSpec{badTLS, wildcard} {
		if errs := s.Validate(ctx, ingressWith(spec)); len(errs) != 1 {
			t.Errorf("create: %s, want one error", causes(errs))
		}
		if errs := s.ValidateUpdate(ctx, ingressWith(spec), ingressWith(spec)); len(errs) != 0 {
			t.Errorf("update keeping the old value: %s", causes(errs))
		}
		if errs := s.ValidateUpdate(ctx, ingressWith(spec), ingressWith(networkingv1.IngressSpec{DefaultBackend: backend})); len(errs) != 1 {
			t.Errorf("update bringing the value: %s, want one error", causes(errs))
		}
	}
}

// TestIngressStatus: /status keeps the spec, checks the load balancer's
// addresses (an address in a legacy form may stay) and warns of those
// and of a non-canonical IPv6 address, naming the entry.
func TestIngressStatus(t *testing.T) {
	ctx := context.Background()
	s := ingressStatus
	old := ingressWith(networkingv1.IngressSpec{IngressClassName: ptr.To("a")})
	old.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "010.0.0.1"}}
	obj := ingressWith(networkingv1.IngressSpec{IngressClassName: ptr.To("b")})
	obj.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "010.0.0.1"}, {IP: "2001:DB8::1"}, {IP: "010.0.0.2"}, {Hostname: "10.0.0.3"}}
	s.PrepareForUpdate(ctx, obj, old)
	if *obj.Spec.IngressClassName != "a" {
		t.Errorf("spec changed through /status: %+v", obj.Spec)
	}
	want := `status.loadBalancer.ingress[2].ip: Invalid value: "010.0.0.2": must not have leading 0s
status.loadBalancer.ingress[3].hostname: Invalid value: "10.0.0.3": must be a DNS name, not an IP address`
	if got := causes(s.ValidateUpdate(ctx, obj, old)); got != want {
		t.Errorf("causes:\n%s\nwant:\n%s", got, want)
	}
	warnings := s.WarningsOnUpdate(ctx, obj, old)
	if len(warnings) != 3 || !strings.HasPrefix(warnings[1], `status.loadBalancer.ingress[1]: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format`) {
		t.Errorf("warnings: %q", warnings)
	}
}
