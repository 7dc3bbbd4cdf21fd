package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// The namespace annotations of kube's PodTolerationRestriction: JSON
// lists of tolerations.
const (
	NamespaceDefaultTolerations   = "scheduler.alpha.kubernetes.io/defaultTolerations"
	NamespaceTolerationsWhitelist = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
)

// PodTolerationRestriction is kube's opt-in plugin of that name. A new pod
// gets its namespace's default tolerations (the cluster's, from the
// plugin's configuration, when the namespace sets none); a pod that is
// not BestEffort, new or updated, tolerates memory pressure; a pod whose
// tolerations its namespace's whitelist (else the cluster's) does not
// cover is refused, on create and update, when admitted and again once
// every plugin and webhook has changed it.
type PodTolerationRestriction struct {
	// Namespaces reads the pods' namespaces (rest.Getter of namespaces).
	Namespaces rest.Getter
	// Config is the cluster's defaults and whitelist; nil: none.
	Config *PodTolerationRestrictionConfig
	// NodeProblems, when set, is DefaultTolerationSeconds, which kube runs
	// just before this plugin. The pods' storage adds its tolerations to
	// new pods before any plugin, but to updated ones only after: this
	// plugin adds them first, so that an updated pod is merged and
	// checked with them as in kube (adding them again is a no-op).
	NodeProblems *core.DefaultTolerationSeconds
}

// memoryPressureToleration is what kube gives every pod that is not
// BestEffort: memory pressure evicts BestEffort pods only.
var memoryPressureToleration = corev1.Toleration{
	Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
}

// Admit implements handlers.MutatingAdmission.
func (p *PodTolerationRestriction) Admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, ok := admittedPod(a, obj, true)
	if !ok {
		return nil
	}
	if p.NodeProblems != nil {
		p.NodeProblems.Add(&pod.Spec)
	}
	var extra []corev1.Toleration
	if a.Operation == handlers.Create {
		defaults, err := p.namespaceTolerations(ctx, a.Namespace, NamespaceDefaultTolerations)
		if err != nil {
			return err
		}
		if defaults == nil && p.Config != nil { // an empty annotation means none, not the cluster's
			defaults = p.Config.Default
		}
		extra = slices.Clone(defaults)
	}
	if podQOS(pod) != corev1.PodQOSBestEffort {
		extra = append(extra, memoryPressureToleration)
	}
	if len(extra) > 0 {
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, extra)
	}
	return p.Validate(ctx, a, obj)
}

// Validate implements handlers.Admission: the whitelist check.
func (p *PodTolerationRestriction) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, ok := admittedPod(a, obj, true)
	if !ok || len(pod.Spec.Tolerations) == 0 {
		return nil
	}
	whitelist, err := p.namespaceTolerations(ctx, a.Namespace, NamespaceTolerationsWhitelist)
	if err != nil {
		return err
	}
	scope := "namespace"
	if whitelist == nil {
		scope = "cluster"
		if p.Config != nil {
			whitelist = p.Config.Whitelist
		}
	}
	if !allowedBy(pod.Spec.Tolerations, whitelist) {
		// A plain error in kube: a 500 without reason.
		return plainError(fmt.Errorf("pod tolerations (possibly merged with namespace default tolerations) conflict with its %s whitelist", scope))
	}
	return nil
}

// namespaceTolerations are the tolerations annotation key of namespace
// name gives: nil when it has no such annotation, none when it is empty.
// An annotation that is not a JSON list of tolerations fails the request
// with the decoder's message, as in kube.
func (p *PodTolerationRestriction) namespaceTolerations(ctx context.Context, name, key string) ([]corev1.Toleration, error) {
	ns, err := admissionNamespace(ctx, namespaceGetter{p.Namespaces}, name)
	if err != nil {
		return nil, err
	}
	value, ok := ns.Annotations[key]
	if !ok {
		return nil, nil
	}
	if value == "" {
		return []corev1.Toleration{}, nil
	}
	var ts []corev1.Toleration
	if err := json.Unmarshal([]byte(value), &ts); err != nil {
		return nil, plainError(err)
	}
	if ts == nil { // "null": kube's conversion makes an empty list of it
		ts = []corev1.Toleration{}
	}
	return ts, nil
}

// podQOS is the pod's QoS class as kube's plugin reads it: its status's
// when set (a client may send one), else computed from its resources.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return podspec.QOSClass(&pod.Spec)
}
