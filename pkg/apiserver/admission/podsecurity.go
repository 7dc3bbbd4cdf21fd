package admission

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psvalidation "k8s.io/pod-security-admission/admission/api/validation"
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
// naming the existing pods that violate it.
//
// The checks and the label parsing are kube's own library's
// (k8s.io/pod-security-admission's policy and api packages); the
// request handling around them is ours, because that library's
// admission package brings client-go's clientsets, informers and scheme
// into the binary, whose initialisers every start would pay for.
type PodSecurity struct {
	checks     policy.Evaluator
	defaults   psapi.Policy
	exempt     psExemptions
	namespaces namespaceGetter
	pods       rest.Lister
	metrics    podSecurityRecorder
}

// psExemptions are the configuration's exemptions as sets; an empty
// name is never exempt.
type psExemptions struct {
	namespaces, usernames, runtimeClasses map[string]bool
}

func setOf(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		if n != "" {
			set[n] = true
		}
	}
	return set
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
	checks, err := policy.NewEvaluator(policy.DefaultChecks(), &cfg.Version)
	if err != nil {
		return nil, fmt.Errorf("podsecurity: %w", err)
	}
	defaults, err := psconfig.ToPolicy(conf.Defaults)
	if err != nil {
		return nil, fmt.Errorf("PodSecurity configuration error: %w", err)
	}
	if errs := psvalidation.ValidatePodSecurityConfiguration(conf); len(errs) > 0 {
		return nil, fmt.Errorf("PodSecurity invalid: %w", errs.ToAggregate())
	}
	return &PodSecurity{
		checks:   checks,
		defaults: defaults,
		exempt: psExemptions{
			namespaces:     setOf(conf.Exemptions.Namespaces),
			usernames:      setOf(conf.Exemptions.Usernames),
			runtimeClasses: setOf(conf.Exemptions.RuntimeClasses),
		},
		namespaces: namespaceGetter{cfg.Namespaces},
		pods:       cfg.Pods,
		metrics:    podSecurityRecorder{newPodSecurityCounters(cfg.Metrics), cfg.Version},
	}, nil
}

// psRequest is one admission request as the plugin reads it.
type psRequest struct {
	attrs handlers.Attributes
	obj   runtime.Object
	gr    schema.GroupResource
	user  string
}

// namespace is the request's namespace; a namespace's own, as kube's
// handlers make it, is its name.
func (r psRequest) namespace() string {
	if r.gr == corev1.Resource("namespaces") {
		return r.attrs.Name
	}
	return r.attrs.Namespace
}

// psVerdict is what the plugin makes of a request: a refusal (nil
// admits), warnings for the client and audit annotations (keys without
// kube's pod-security.kubernetes.io/ prefix).
type psVerdict struct {
	refusal     error
	warnings    []string
	annotations map[string]string
}

func (v *psVerdict) annotate(key, value string) {
	if v.annotations == nil {
		v.annotations = map[string]string{}
	}
	v.annotations[key] = value
}

// admitted is a verdict that admits with one audit annotation.
func admitted(key, value string) psVerdict {
	var v psVerdict
	v.annotate(key, value)
	return v
}

// Validate implements handlers.Admission: creates and updates of
// namespaces, pods and the resources that carry a pod template.
func (p *PodSecurity) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create && a.Operation != handlers.Update {
		return nil
	}
	req := psRequest{attrs: a, obj: obj, gr: a.Resource.GroupResource()}
	if u, ok := request.UserFrom(ctx); ok {
		req.user = u.GetName()
	}
	var v psVerdict
	switch {
	case req.gr == corev1.Resource("namespaces"):
		v = p.admitNamespace(ctx, req)
	case req.gr == corev1.Resource("pods"):
		v = p.admitPod(ctx, req)
	case podTemplateResources[req.gr]:
		v = p.admitTemplate(ctx, req)
	default:
		return nil
	}
	for _, w := range v.warnings {
		request.AddWarning(ctx, w)
	}
	for k, val := range v.annotations {
		request.AddAuditAnnotation(ctx, psapi.AuditAnnotationPrefix+k, val)
	}
	return v.refusal
}

// failed is a refusal for an error of the plugin's own, cause its
// detail (nil: none), noted in the "error" audit annotation as kube's
// plugin does.
func failed(refusal *apierrors.StatusError, cause error) psVerdict {
	note := refusal.ErrStatus.Message
	if cause != nil {
		note = fmt.Sprintf("%s: %v", note, cause)
	}
	return psVerdict{refusal: refusal, annotations: map[string]string{"error": note}}
}

// undecodable refuses an object of a type the plugin does not expect
// (400). Its details are those of a Forbidden for the request, as kube's
// plugin answers from a Forbidden whose details a status without any
// leaves in place.
func undecodable(req psRequest, what string, cause error) psVerdict {
	refusal := apierrors.NewBadRequest(what)
	refusal.ErrStatus.Details = &metav1.StatusDetails{Group: req.gr.Group, Kind: req.gr.Resource, Name: req.attrs.Name}
	return failed(refusal, cause)
}

// namespaceGetter reads a namespace from the watch cache, and from etcd
// when the cache does not have it yet (a namespace created a moment
// ago), as kube's plugins read their informer then the API.
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
