package admission

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// namespacesOf reads fixed namespaces, for our plugin and kube's library.
type namespacesOf map[string]*corev1.Namespace

func (n namespacesOf) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	return n.GetNamespace(context.Background(), name)
}

func (n namespacesOf) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// kubeAttributes are a request as kube's library reads it.
type kubeAttributes struct {
	a    handlers.Attributes
	obj  runtime.Object
	user string
}

func (k kubeAttributes) GetName() string { return k.a.Name }
func (k kubeAttributes) GetNamespace() string {
	if k.a.Resource.GroupResource() == corev1.Resource("namespaces") {
		return k.a.Name
	}
	return k.a.Namespace
}
func (k kubeAttributes) GetResource() schema.GroupVersionResource { return k.a.Resource }
func (k kubeAttributes) GetKind() schema.GroupVersionKind         { return k.a.Kind }
func (k kubeAttributes) GetSubresource() string                   { return k.a.Subresource }
func (k kubeAttributes) GetUserName() string                      { return k.user }
func (k kubeAttributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(k.a.Operation)
}
func (k kubeAttributes) GetObject() (runtime.Object, error) { return k.obj, nil }
func (k kubeAttributes) GetOldObject() (runtime.Object, error) {
	if k.a.Old == nil {
		return nil, errNoOldObject
	}
	return k.a.Old, nil
}

type noMetrics struct{}

func (noMetrics) RecordEvaluation(psmetrics.Decision, psapi.LevelVersion, psmetrics.Mode, psapi.Attributes) {
}
func (noMetrics) RecordExemption(psapi.Attributes)   {}
func (noMetrics) RecordError(bool, psapi.Attributes) {}

// answer is what a request gets: its refusal's status, warnings and
// audit annotations.
type answer struct {
	Status      *metav1.Status
	Warnings    []string
	Annotations map[string]string
}

type annotations map[string]string

func (a annotations) AddAuditAnnotation(k, v string) { a[k] = v }

// kubeAnswer is kube's plugin's answer: the library's response on top
// of a generic Forbidden.
func kubeAnswer(ctx context.Context, kube *psadmission.Admission, attrs kubeAttributes) answer {
	resp := kube.Validate(ctx, attrs)
	out := answer{Warnings: resp.Warnings, Annotations: map[string]string{}}
	for k, v := range resp.AuditAnnotations {
		out.Annotations[psapi.AuditAnnotationPrefix+k] = v
	}
	if !resp.Allowed {
		refusal := apierrors.NewForbidden(attrs.a.Resource.GroupResource(), attrs.a.Name, errors.New("Not allowed by PodSecurity")).ErrStatus
		if s := resp.Result; s != nil {
			refusal.Message, refusal.Reason, refusal.Code = s.Message, s.Reason, s.Code
			if s.Details != nil {
				refusal.Details = s.Details
			}
		}
		out.Status = &refusal
	}
	return out
}

func ourAnswer(ctx context.Context, p *PodSecurity, attrs kubeAttributes) answer {
	warnings, notes := &request.Warnings{}, annotations{}
	ctx = request.WithAuditAnnotator(request.WithWarnings(ctx, warnings), notes)
	if attrs.user != "" {
		ctx = request.WithUser(ctx, &user.DefaultInfo{Name: attrs.user})
	}
	out := answer{Warnings: warnings.List(), Annotations: notes}
	if err := p.Validate(ctx, attrs.a, attrs.obj); err != nil {
		var status *apierrors.StatusError
		if !errors.As(err, &status) {
			panic(err)
		}
		out.Status = &status.ErrStatus
	}
	out.Warnings = warnings.List()
	return out
}

func labelled(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// parityCase is one request: its attributes, object and user.
type parityCase struct {
	name  string
	attrs handlers.Attributes
	obj   runtime.Object
	user  string
}

func podRequest(op handlers.Operation, ns, sub string, pod, old runtime.Object) handlers.Attributes {
	a := handlers.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Subresource: sub,
		Namespace: ns, Name: "p", Kind: corev1.SchemeGroupVersion.WithKind("Pod")}
	if old != nil {
		a.Old = old
	}
	return a
}

func namespaceRequest(op handlers.Operation, name string, old runtime.Object) handlers.Attributes {
	a := handlers.Attributes{Operation: op, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"),
		Name: name, Kind: corev1.SchemeGroupVersion.WithKind("Namespace")}
	if old != nil {
		a.Old = old
	}
	return a
}

func parityCases() []parityCase {
	priv := dryRunPod("p", true, false, "", "")
	plain := dryRunPod("p", false, false, "", "")
	exemptRC := dryRunPod("p", true, false, "", "exempt")
	newImage := priv.DeepCopy()
	newImage.Spec.Containers[0].Image = "busybox:2"
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: priv.Spec}}}
	deployAttrs := func(ns, sub string) handlers.Attributes {
		return handlers.Attributes{Operation: handlers.Create, Resource: appsv1.SchemeGroupVersion.WithResource("deployments"),
			Subresource: sub, Namespace: ns, Name: "d", Kind: appsv1.SchemeGroupVersion.WithKind("Deployment")}
	}
	rcAttrs := handlers.Attributes{Operation: handlers.Create, Resource: corev1.SchemeGroupVersion.WithResource("replicationcontrollers"),
		Namespace: "restricted", Name: "rc", Kind: corev1.SchemeGroupVersion.WithKind("ReplicationController")}
	enforce := "pod-security.kubernetes.io/enforce"
	return []parityCase{
		{"privileged pod, enforce restricted", podRequest(handlers.Create, "restricted", "", nil, nil), priv, ""},
		{"plain pod, enforce restricted", podRequest(handlers.Create, "restricted", "", nil, nil), plain, ""},
		{"privileged pod, warn baseline audit restricted", podRequest(handlers.Create, "warned", "", nil, nil), priv, ""},
		{"privileged pod, unlabelled", podRequest(handlers.Create, "plain", "", nil, nil), priv, ""},
		{"privileged pod, invalid label", podRequest(handlers.Create, "invalid", "", nil, nil), priv, ""},
		{"privileged pod, old version", podRequest(handlers.Create, "versioned", "", nil, nil), priv, ""},
		{"exempt namespace", podRequest(handlers.Create, "kube-system", "", nil, nil), priv, ""},
		{"exempt user", podRequest(handlers.Create, "restricted", "", nil, nil), priv, "exempt-user"},
		{"exempt runtime class", podRequest(handlers.Create, "restricted", "", nil, nil), exemptRC, ""},
		{"missing namespace", podRequest(handlers.Create, "gone", "", nil, nil), priv, ""},
		{"update, labels only", podRequest(handlers.Update, "restricted", "", priv, priv), priv, ""},
		{"update, an image", podRequest(handlers.Update, "restricted", "", priv, priv), newImage, ""},
		{"update, no old object", podRequest(handlers.Update, "restricted", "", nil, nil), priv, ""},
		{"update, old of another type", podRequest(handlers.Update, "restricted", "", labelled("x", nil), nil), priv, ""},
		{"status", podRequest(handlers.Update, "restricted", "status", priv, priv), newImage, ""},
		{"ephemeral containers", podRequest(handlers.Update, "restricted", "ephemeralcontainers", priv, priv), newImage, ""},
		{"pods with another type", podRequest(handlers.Create, "restricted", "", nil, nil), labelled("x", nil), ""},
		{"deployment, enforce restricted", deployAttrs("restricted", ""), deploy, ""},
		{"deployment, unlabelled", deployAttrs("plain", ""), deploy, ""},
		{"deployment, invalid label", deployAttrs("invalid", ""), deploy, ""},
		{"deployment, missing namespace", deployAttrs("gone", ""), deploy, ""},
		{"deployment, scale", deployAttrs("restricted", "scale"), deploy, ""},
		{"deployment, exempt user", deployAttrs("restricted", ""), deploy, "exempt-user"},
		{"deployment of another type", deployAttrs("restricted", ""), priv, ""},
		{"rc without a template", rcAttrs, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"}}, ""},
		{"namespace create, invalid", namespaceRequest(handlers.Create, "n", nil), labelled("n", map[string]string{enforce: "strict"}), ""},
		{"namespace create, valid", namespaceRequest(handlers.Create, "n", nil), labelled("n", map[string]string{enforce: "baseline"}), ""},
		{"namespace create, exempt", namespaceRequest(handlers.Create, "kube-system", nil),
			labelled("kube-system", map[string]string{enforce: "restricted", "pod-security.kubernetes.io/warn-version": "v1.30"}), ""},
		{"namespace update, stays invalid", namespaceRequest(handlers.Update, "n", labelled("n", map[string]string{enforce: "strict"})),
			labelled("n", map[string]string{enforce: "strict", "a": "b"}), ""},
		{"namespace update, newly invalid", namespaceRequest(handlers.Update, "n", labelled("n", map[string]string{enforce: "strict"})),
			labelled("n", map[string]string{enforce: "stricter"}), ""},
		{"namespace update, stricter", namespaceRequest(handlers.Update, "restricted", labelled("restricted", nil)),
			labelled("restricted", map[string]string{enforce: "baseline"}), ""},
		{"namespace update, looser", namespaceRequest(handlers.Update, "restricted", labelled("restricted", map[string]string{enforce: "restricted"})),
			labelled("restricted", map[string]string{enforce: "baseline"}), ""},
		{"namespace update, older version", namespaceRequest(handlers.Update, "restricted", labelled("restricted", map[string]string{enforce: "restricted"})),
			labelled("restricted", map[string]string{enforce: "baseline", enforce + "-version": "v1.20"}), ""},
		{"namespace update, exempt", namespaceRequest(handlers.Update, "kube-system", labelled("kube-system", nil)),
			labelled("kube-system", map[string]string{enforce: "baseline"}), ""},
		{"namespace update, no old", namespaceRequest(handlers.Update, "n", nil), labelled("n", nil), ""},
		{"namespace update, old of another type", namespaceRequest(handlers.Update, "n", priv), labelled("n", nil), ""},
		{"namespace of another type", namespaceRequest(handlers.Create, "n", nil), priv, ""},
		{"namespace finalize", handlers.Attributes{Operation: handlers.Update, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"),
			Subresource: "finalize", Name: "n"}, labelled("n", map[string]string{enforce: "strict"}), ""},
	}
}

// parityFixture is the configuration and the namespaces the comparisons
// with kube's plugin run against: exemptions of each kind, and namespaces
// enforcing, warning and auditing, unlabelled, with an invalid level, and
// pinned to an old and to a future version.
func parityFixture(t *testing.T) (*psconfig.PodSecurityConfiguration, namespacesOf) {
	t.Helper()
	conf, err := LoadPodSecurityConfiguration([]byte("apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\n" +
		"exemptions:\n  namespaces: [kube-system]\n  usernames: [exempt-user]\n  runtimeClasses: [exempt]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return conf, namespacesOf{
		"restricted": labelled("restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}),
		"warned":     labelled("warned", map[string]string{"pod-security.kubernetes.io/warn": "baseline", "pod-security.kubernetes.io/audit": "restricted"}),
		"plain":      labelled("plain", nil),
		"invalid":    labelled("invalid", map[string]string{"pod-security.kubernetes.io/enforce": "strict"}),
		"versioned":  labelled("versioned", map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.22"}),
		"future":     labelled("future", map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.99"}),
	}
}

// TestPodSecurityAsKube: for each request, our plugin answers what
// kube's plugin (its library's response on top of a Forbidden) answers:
// the same refusal, warnings and audit annotations.
func TestPodSecurityAsKube(t *testing.T) {
	conf, namespaces := parityFixture(t)
	pods := podsOf{dryRunPod("a", true, false, "", ""), dryRunPod("b", false, true, "", "")}
	version := psapi.MajorMinorVersion(1, 37)
	ours, err := NewPodSecurity(PodSecurityConfig{Configuration: conf, Namespaces: namespaces, Pods: pods, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), &version)
	if err != nil {
		t.Fatal(err)
	}
	kube := &psadmission.Admission{Configuration: conf, Evaluator: evaluator, Metrics: noMetrics{},
		NamespaceGetter: namespaces, PodLister: pods}
	if err := kube.CompleteConfiguration(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range parityCases() {
		t.Run(tc.name, func(t *testing.T) {
			attrs := kubeAttributes{a: tc.attrs, obj: tc.obj, user: tc.user}
			want := kubeAnswer(context.Background(), kube, attrs)
			got := ourAnswer(context.Background(), ours, attrs)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-kube's +ours):\n%s", diff)
			}
		})
	}
}
