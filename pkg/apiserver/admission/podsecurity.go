package admission

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PodSecurityConfig is what the PodSecurity plugin reads.
type PodSecurityConfig struct {
	// Configuration is the plugin's PodSecurityConfiguration (defaults
	// and exemptions), as kube's loader returns it; nil is kube's default
	// (privileged:latest everywhere, no exemptions).
	Configuration *psconfig.PodSecurityConfiguration
	// Namespaces reads namespaces (their pod-security.kubernetes.io
	// labels); Pods lists a namespace's pods (the dry run of a stricter
	// enforce label).
	Namespaces rest.Getter
	Pods       rest.Lister
	// Version is the server's Kubernetes version (major.minor), which
	// "latest" means; the metrics call a policy version newer than it
	// "future".
	Version psapi.Version
	// Metrics is the server's registry, where the plugin's metrics are
	// created (nil: registered nowhere).
	Metrics prometheus.Registerer
}

// PodSecurity is kube's PodSecurity admission plugin: the Pod Security
// Standards a namespace's pod-security.kubernetes.io labels ask for are
// enforced on its pods (a violation is refused 403), and audited and
// warned about on its pods and the pod templates of its workloads; a
// namespace whose enforce label gets stricter is allowed with warnings
// naming the existing pods that violate it. The decisions, messages and
// audit annotations are kube's own library's
// (k8s.io/pod-security-admission); this type only carries our requests
// to it.
type PodSecurity struct {
	delegate *psadmission.Admission
}

// NewPodSecurity checks the configuration and builds the plugin.
func NewPodSecurity(cfg PodSecurityConfig) (*PodSecurity, error) {
	conf := cfg.Configuration
	if conf == nil {
		var err error
		if conf, err = LoadPodSecurityConfiguration(nil); err != nil {
			return nil, err
		}
	}
	// As kube's plugin, the checks stop at the version the server
	// emulates: a newer label version gets that version's checks.
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), &cfg.Version)
	if err != nil {
		return nil, fmt.Errorf("podsecurity: %w", err)
	}
	delegate := &psadmission.Admission{
		Configuration:    conf,
		Evaluator:        evaluator,
		Metrics:          podSecurityRecorder{newPodSecurityCounters(cfg.Metrics), cfg.Version},
		PodSpecExtractor: psadmission.DefaultPodSpecExtractor{},
		NamespaceGetter:  namespaceGetter{cfg.Namespaces},
		PodLister:        podLister{cfg.Pods},
	}
	if err := delegate.CompleteConfiguration(); err != nil {
		return nil, fmt.Errorf("PodSecurity configuration error: %w", err)
	}
	if err := delegate.ValidateConfiguration(); err != nil {
		return nil, fmt.Errorf("PodSecurity invalid: %w", err)
	}
	return &PodSecurity{delegate: delegate}, nil
}

// Validate implements handlers.Admission: creates and updates of
// namespaces, pods and the resources that carry a pod template.
func (p *PodSecurity) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create && a.Operation != handlers.Update {
		return nil
	}
	gr := a.Resource.GroupResource()
	if gr != corev1.Resource("pods") && gr != corev1.Resource("namespaces") && !p.delegate.PodSpecExtractor.HasPodSpec(gr) {
		return nil
	}
	attrs := podSecurityAttributes{a: a, obj: obj}
	if u, ok := request.UserFrom(ctx); ok {
		attrs.user = u.GetName()
	}
	result := p.delegate.Validate(ctx, &attrs)
	for _, w := range result.Warnings {
		request.AddWarning(ctx, w)
	}
	for k, v := range result.AuditAnnotations {
		request.AddAuditAnnotation(ctx, psapi.AuditAnnotationPrefix+k, v)
	}
	if result.Allowed {
		return nil
	}
	// kube's plugin starts from a generic refusal and takes what the
	// library's status has.
	refusal := apierrors.NewForbidden(gr, a.Name, errors.New("Not allowed by PodSecurity"))
	if s := result.Result; s != nil {
		if s.Message != "" {
			refusal.ErrStatus.Message = s.Message
		}
		if s.Reason != "" {
			refusal.ErrStatus.Reason = s.Reason
		}
		if s.Details != nil {
			refusal.ErrStatus.Details = s.Details
		}
		if s.Code != 0 {
			refusal.ErrStatus.Code = s.Code
		}
	}
	return refusal
}

// podSecurityAttributes are a request as kube's library reads it.
type podSecurityAttributes struct {
	a    handlers.Attributes
	obj  runtime.Object
	user string
}

func (p *podSecurityAttributes) GetName() string { return p.a.Name }

// GetNamespace is the request's namespace; a namespace's own, as kube's
// handlers make it, is its name.
func (p *podSecurityAttributes) GetNamespace() string {
	if p.a.Resource.GroupResource() == corev1.Resource("namespaces") {
		return p.a.Name
	}
	return p.a.Namespace
}

func (p *podSecurityAttributes) GetResource() schema.GroupVersionResource { return p.a.Resource }
func (p *podSecurityAttributes) GetKind() schema.GroupVersionKind         { return p.a.Kind }
func (p *podSecurityAttributes) GetSubresource() string                   { return p.a.Subresource }
func (p *podSecurityAttributes) GetUserName() string                      { return p.user }

func (p *podSecurityAttributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(p.a.Operation)
}

func (p *podSecurityAttributes) GetObject() (runtime.Object, error) { return p.obj, nil }

func (p *podSecurityAttributes) GetOldObject() (runtime.Object, error) {
	if p.a.Old == nil {
		return nil, errors.New("no old object")
	}
	return p.a.Old, nil
}

// namespaceGetter reads a namespace from the watch cache, and from etcd
// when the cache does not have it yet (a namespace created a moment
// ago), as kube's plugin reads its informer then the API.
type namespaceGetter struct{ namespaces rest.Getter }

func (n namespaceGetter) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ctx = request.WithNamespace(ctx, "")
	obj, err := n.namespaces.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = n.namespaces.Get(ctx, name, &metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("podsecurity: a namespace read as %T", obj)
	}
	return ns, nil
}

// podLister lists a namespace's pods from the watch cache, as kube's
// plugin lists its informer's.
type podLister struct{ pods rest.Lister }

func (l podLister) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	list, err := l.pods.List(request.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for _, item := range list.Items {
		pod := &corev1.Pod{}
		if err := item.Decode(pod); err != nil {
			return nil, err
		}
		out = append(out, pod)
	}
	return out, nil
}
