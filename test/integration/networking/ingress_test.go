package networking

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// kube's messages for names that are not DNS subdomains, labels.
const (
	notSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	notLabel     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

func serviceBackend(name string, port networkingv1.ServiceBackendPort) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: port}}
}

func httpRule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}
}

func path(p string, pathType networkingv1.PathType, backend networkingv1.IngressBackend) networkingv1.HTTPIngressPath {
	hp := networkingv1.HTTPIngressPath{Path: p, Backend: backend}
	if pathType != "" {
		hp.PathType = &pathType
	}
	return hp
}

func newIngress(name string, spec networkingv1.IngressSpec) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// TestIngress: a new ingress starts at generation 1 with an empty status
// (a status sent is dropped); spec changes bump the generation, status
// changes go through /status only, which keeps the spec; the table is
// kube's.
func TestIngress(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client := clientset(t).NetworkingV1().Ingresses(ns)
	ctx := context.Background()
	web := serviceBackend("web", networkingv1.ServiceBackendPort{Number: 80})
	ing := newIngress("web", networkingv1.IngressSpec{
		IngressClassName: ptr.To("nginx"),
		Rules:            []networkingv1.IngressRule{httpRule("a.example.com", path("/", networkingv1.PathTypePrefix, web))},
		TLS:              []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "tls"}},
	})
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}}
	created, err := client.Create(ctx, ing, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Generation != 1 || len(created.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("created: generation %d, status %+v", created.Generation, created.Status)
	}

	created.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.2"}, {Hostname: "lb.example.com"}, {IP: "10.0.0.1"}}
	created.Spec.IngressClassName = ptr.To("ignored-by-status")
	st, err := client.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *st.Spec.IngressClassName != "nginx" || len(st.Status.LoadBalancer.Ingress) != 3 || st.Generation != 1 {
		t.Errorf("after /status: class %s, status %+v, generation %d", *st.Spec.IngressClassName, st.Status, st.Generation)
	}

	st.Spec.Rules[0].Host = "b.example.com"
	st.Status = networkingv1.IngressStatus{}
	updated, err := client.Update(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Generation != 2 || len(updated.Status.LoadBalancer.Ingress) != 3 {
		t.Errorf("after an update: generation %d, status %+v", updated.Generation, updated.Status)
	}

	columns, rows := table(t, srv, "/apis/networking.k8s.io/v1/namespaces/"+ns+"/ingresses")
	if want := []string{"Name", "Class", "Hosts", "Address", "Ports", "Age"}; !slices.Equal(columns, want) {
		t.Errorf("columns %v, want %v", columns, want)
	}
	if len(rows) != 1 || fmt.Sprint(rows[0][:5]) != "[web nginx b.example.com 10.0.0.1,10.0.0.2,lb.example.com 80, 443]" {
		t.Errorf("rows %v", rows)
	}

	if _, err := client.List(ctx, metav1.ListOptions{FieldSelector: "spec.ingressClassName=nginx"}); !apierrors.IsBadRequest(err) ||
		err.Error() != `"spec.ingressClassName" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("selecting an unknown field: %v", err)
	}
}

// TestIngressValidation: bad ingresses get kube's causes, in its order.
func TestIngressValidation(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client, w := warningClientset(t)
	ingresses := client.NetworkingV1().Ingresses(ns)
	ctx := context.Background()
	web := serviceBackend("web", networkingv1.ServiceBackendPort{Number: 80})
	for _, tc := range []struct {
		name string
		ing  *networkingv1.Ingress
		want []string
	}{
		{"no rules", newIngress("a", networkingv1.IngressSpec{}),
			[]string{"spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"}},
		{"paths", newIngress("a", networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{httpRule("",
			path("/", "", web), path("foo", networkingv1.PathTypeExact, web), path("/a//b/..", networkingv1.PathTypePrefix, web),
			path("", networkingv1.PathTypeImplementationSpecific, web), path("/", "Bogus", web))}}), []string{
			"spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
			`spec.rules[0].http.paths[1].path: Invalid value: "foo": must be an absolute path`,
			`spec.rules[0].http.paths[2].path: Invalid value: "/a//b/..": must not contain '//'`,
			`spec.rules[0].http.paths[2].path: Invalid value: "/a//b/..": cannot end with '/..'`,
			`spec.rules[0].http.paths[4].pathType: Unsupported value: "Bogus": supported values: "Exact", "ImplementationSpecific", "Prefix"`,
		}},
		{"backends", newIngress("a", networkingv1.IngressSpec{
			DefaultBackend: &networkingv1.IngressBackend{Service: web.Service, Resource: &corev1.TypedLocalObjectReference{Kind: "K", Name: "n"}},
			Rules: []networkingv1.IngressRule{httpRule("",
				path("/", networkingv1.PathTypePrefix, serviceBackend("Foo_bar", networkingv1.ServiceBackendPort{Number: 80})),
				path("/", networkingv1.PathTypePrefix, serviceBackend("web", networkingv1.ServiceBackendPort{Name: "http", Number: 80})),
				path("/", networkingv1.PathTypePrefix, serviceBackend("web", networkingv1.ServiceBackendPort{})),
				path("/", networkingv1.PathTypePrefix, serviceBackend("1abc", networkingv1.ServiceBackendPort{Number: 70000})),
				path("/", networkingv1.PathTypePrefix, networkingv1.IngressBackend{}))}}), []string{
			`spec.defaultBackend: Invalid value: "": cannot set both resource and service backends`,
			"spec.rules[0].http.paths[0].backend.service.name: Invalid value: \"Foo_bar\": " + notLabel,
			`spec.rules[0].http.paths[1].backend: Invalid value: "": cannot set both port name & port number`,
			"spec.rules[0].http.paths[2].backend: Required value: port name or number is required",
			"spec.rules[0].http.paths[3].backend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
			`spec.rules[0].http.paths[4].backend: Invalid value: "": resource or service backend is required`,
		}},
		{"hosts", newIngress("a", networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
			httpRule("1.2.3.4", path("/", networkingv1.PathTypePrefix, web)), httpRule("*.example.com", path("/", networkingv1.PathTypePrefix, web)),
			httpRule("Foo.com", path("/", networkingv1.PathTypePrefix, web)), httpRule("x.com")}}), []string{
			`spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address`,
			"spec.rules[2].host: Invalid value: \"Foo.com\": " + notSubdomain,
			"spec.rules[3].http.paths: Required value",
		}},
		{"tls and class", newIngress("a", networkingv1.IngressSpec{DefaultBackend: &web, IngressClassName: ptr.To("Foo_"),
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"Bad_Host", "*.ok.com"}, SecretName: "Bad_Secret"}}}), []string{
			"spec.tls[0].hosts[0]: Invalid value: \"Bad_Host\": " + notSubdomain,
			"spec.tls[0].secretName: Invalid value: \"Bad_Secret\": " + notSubdomain,
			"spec.ingressClassName: Invalid value: \"Foo_\": " + notSubdomain,
		}},
		{"class annotation", &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"kubernetes.io/ingress.class": "other"}},
			Spec: networkingv1.IngressSpec{DefaultBackend: &web, IngressClassName: ptr.To("nginx")}},
			[]string{"annotations.kubernetes.io/ingress.class: Invalid value: \"other\": must match `ingressClassName` when both are specified"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ingresses.Create(ctx, tc.ing, metav1.CreateOptions{})
			wantInvalid(t, err, "Ingress", tc.want...)
		})
	}

	// The annotation alone is deprecated: a warning, not an error.
	annotated := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "annotated", Annotations: map[string]string{"kubernetes.io/ingress.class": "other"}},
		Spec: networkingv1.IngressSpec{DefaultBackend: &web}}
	w.take()
	if _, err := ingresses.Create(ctx, annotated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.take(); !slices.Equal(got, []string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}) {
		t.Errorf("warnings %q", got)
	}
}

// TestIngressDefaultClass: kube's DefaultIngressClass admission gives a new
// ingress without a class the default IngressClass (the newest of
// several), and leaves alone one that names a class, in its spec or the
// deprecated annotation; the table marks the default class. It has a
// server of its own: a default class applies to every new ingress.
func TestIngressDefaultClass(t *testing.T) {
	t.Parallel()
	own := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(own.ClientConfig)
	ns := own.CreateNamespace(t)
	ctx := context.Background()
	web := serviceBackend("web", networkingv1.ServiceBackendPort{Number: 80})
	create := func(name string, annotations map[string]string, class *string) *networkingv1.Ingress {
		t.Helper()
		ing, err := client.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
			Spec:       networkingv1.IngressSpec{DefaultBackend: &web, IngressClassName: class},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ing
	}
	if ing := create("before", nil, nil); ing.Spec.IngressClassName != nil {
		t.Errorf("no default class yet: got %s", *ing.Spec.IngressClassName)
	}
	for _, name := range []string{"not-default", "default"} {
		ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}
		if name == "default" {
			ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
		}
		if _, err := client.NetworkingV1().IngressClasses().Create(ctx, ic, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if ing := create("after", nil, nil); ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "default" {
		t.Errorf("class %v, want default", ing.Spec.IngressClassName)
	}
	if ing := create("named", nil, ptr.To("other")); *ing.Spec.IngressClassName != "other" {
		t.Errorf("named class replaced: %s", *ing.Spec.IngressClassName)
	}
	if ing := create("annotated", map[string]string{"kubernetes.io/ingress.class": "other"}, nil); ing.Spec.IngressClassName != nil {
		t.Errorf("annotated ingress got class %s", *ing.Spec.IngressClassName)
	}
	_, rows := table(t, own, "/apis/networking.k8s.io/v1/ingressclasses")
	if len(rows) != 2 || fmt.Sprint(rows[0][0], ", ", rows[1][0]) != "default (default), not-default" {
		t.Errorf("rows %v", rows)
	}
}

// TestIngressClass: parameters are cluster-scoped by default; the
// controller never changes; bad classes get kube's causes.
func TestIngressClass(t *testing.T) {
	t.Parallel()
	classes := clientset(t).NetworkingV1().IngressClasses()
	ctx := context.Background()
	name := testserver.NamespaceName(t)
	ic, err := classes.Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "false"}},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "Params", Name: "p"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ic.Generation != 1 || ic.Spec.Parameters.Scope == nil || *ic.Spec.Parameters.Scope != networkingv1.IngressClassParametersReferenceScopeCluster {
		t.Errorf("created: generation %d, parameters %+v", ic.Generation, ic.Spec.Parameters)
	}
	ic.Spec.Controller = "example.com/other"
	_, err = classes.Update(ctx, ic, metav1.UpdateOptions{})
	wantInvalid(t, err, "IngressClass", `spec.controller: Invalid value: "example.com/other": field is immutable`)

	for _, tc := range []struct {
		spec networkingv1.IngressClassSpec
		want []string
	}{
		{networkingv1.IngressClassSpec{}, []string{"spec.controller: Required value"}},
		{networkingv1.IngressClassSpec{Controller: "foo"}, []string{`spec.controller: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")`}},
		{networkingv1.IngressClassSpec{Controller: "a.com/b", Parameters: &networkingv1.IngressClassParametersReference{
			APIGroup: ptr.To("A_"), Name: "a/b", Scope: ptr.To("Bogus")}}, []string{
			"spec.parameters.apiGroup: Invalid value: \"A_\": " + notSubdomain,
			`spec.parameters.name: Invalid value: "a/b": may not contain '/'`,
			`spec.parameters.scope: Unsupported value: "Bogus": supported values: "Cluster", "Namespace"`,
			"spec.parameters.kind: Required value",
		}},
		{networkingv1.IngressClassSpec{Controller: "a.com/b", Parameters: &networkingv1.IngressClassParametersReference{
			Kind: "K", Name: "n", Scope: ptr.To("Namespace")}}, []string{"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"}},
	} {
		_, err := classes.Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name + "-bad"}, Spec: tc.spec}, metav1.CreateOptions{})
		wantInvalid(t, err, "IngressClass", tc.want...)
	}
	_, rows := table(t, srv, "/apis/networking.k8s.io/v1/ingressclasses?fieldSelector=metadata.name%3D"+name)
	if len(rows) != 1 || fmt.Sprint(rows[0][:3]) != fmt.Sprintf("[%s example.com/ingress Params.k8s.example.com/p]", name) {
		t.Errorf("rows %v", rows)
	}
}
