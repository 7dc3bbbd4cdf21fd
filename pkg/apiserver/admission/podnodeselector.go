package admission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// NamespaceNodeSelector is the namespace annotation of kube's
// PodNodeSelector: a label selector of equalities ("k=v,k2=v2") its pods
// are scheduled with.
const NamespaceNodeSelector = "scheduler.alpha.kubernetes.io/node-selector"

// clusterDefaultNodeSelector is the key of PodNodeSelector's
// configuration giving the selector of namespaces without the annotation;
// its other keys are namespace names, with the whitelist of their pods'
// selectors.
const clusterDefaultNodeSelector = "clusterDefaultNodeSelector"

// PodNodeSelector is kube's opt-in plugin of that name: a new pod's
// nodeSelector gets its namespace's (from the annotation, else the
// cluster default of the configuration) and must not contradict it;
// with a whitelist for its namespace in the configuration, the pod's
// selector may only hold labels of the whitelist. Checked again once
// every plugin and webhook has changed the pod. Creates only.
type PodNodeSelector struct {
	// Namespaces reads the pods' namespaces (rest.Getter of namespaces).
	Namespaces rest.Getter
	// Selectors is the configuration: clusterDefaultNodeSelector and
	// per-namespace whitelists (ReadPodNodeSelectorConfig).
	Selectors map[string]string
}

var podsResource = corev1.Resource("pods")

// Admit implements handlers.MutatingAdmission.
func (p *PodNodeSelector) Admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, ok := admittedPod(a, obj, false)
	if !ok {
		return nil
	}
	name := mutatingName(pod)
	nsSelector, err := p.namespaceSelector(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if labels.Conflicts(nsSelector, labels.Set(pod.Spec.NodeSelector)) {
		return apierrors.NewForbidden(podsResource, name, errors.New("pod node label selector conflicts with its namespace node label selector"))
	}
	// The pod's own labels win (they agree with the namespace's anyway).
	pod.Spec.NodeSelector = labels.Merge(nsSelector, pod.Spec.NodeSelector)
	return p.validate(ctx, a.Namespace, pod, name)
}

// Validate implements handlers.Admission.
func (p *PodNodeSelector) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, ok := admittedPod(a, obj, false)
	if !ok {
		return nil
	}
	return p.validate(ctx, a.Namespace, pod, pod.Name)
}

// validate refuses a pod (named name in the refusal) whose selector
// contradicts its namespace's, or is not within its namespace's
// whitelist.
func (p *PodNodeSelector) validate(ctx context.Context, namespace string, pod *corev1.Pod, name string) error {
	nsSelector, err := p.namespaceSelector(ctx, namespace)
	if err != nil {
		return err
	}
	if labels.Conflicts(nsSelector, labels.Set(pod.Spec.NodeSelector)) {
		return apierrors.NewForbidden(podsResource, name, errors.New("pod node label selector conflicts with its namespace node label selector"))
	}
	whitelist, err := labels.ConvertSelectorToLabelsMap(p.Selectors[namespace])
	if err != nil {
		return plainError(err)
	}
	if !withinWhitelist(pod.Spec.NodeSelector, whitelist) {
		return apierrors.NewForbidden(podsResource, name, errors.New("pod node label selector labels conflict with its namespace whitelist"))
	}
	return nil
}

// namespaceSelector is the node selector of namespace name: its
// annotation's (even empty), else the cluster default. A selector that
// does not parse fails the request with the parser's message, as in kube.
func (p *PodNodeSelector) namespaceSelector(ctx context.Context, name string) (labels.Set, error) {
	ns, err := namespaceGetter{p.Namespaces}.GetNamespace(ctx, name)
	if err != nil {
		// kube's plugin says so of any failure to read it, as an internal
		// error (NamespaceLifecycle refuses such pods before it anyway).
		return nil, apierrors.NewInternalError(fmt.Errorf("namespace %s does not exist", name))
	}
	selector, ok := ns.Annotations[NamespaceNodeSelector]
	if !ok {
		selector = p.Selectors[clusterDefaultNodeSelector]
	}
	set, err := labels.ConvertSelectorToLabelsMap(selector)
	if err != nil {
		return nil, plainError(err)
	}
	return set, nil
}

// withinWhitelist reports whether every label of selector is one of
// whitelist's; an empty whitelist allows any.
func withinWhitelist(selector, whitelist labels.Set) bool {
	if len(whitelist) == 0 {
		return true
	}
	for k, v := range selector {
		if w, ok := whitelist[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// maxNodeSelectorConfigDocuments bounds the documents read from the
// configuration: kube's loop over a malformed JSON stream never ends.
const maxNodeSelectorConfigDocuments = 1000

// ReadPodNodeSelectorConfig reads PodNodeSelector's configuration as kube
// does (podNodeSelectorPluginConfig: a map of clusterDefaultNodeSelector
// and namespace names to selectors, in YAML or JSON, matched
// case-insensitively): none (r nil) is empty; the first document that
// decodes counts, those before it that do not are skipped (what they
// decoded before failing stays). kube never refuses it.
func ReadPodNodeSelectorConfig(r io.Reader) map[string]string {
	var cfg struct {
		PodNodeSelectorPluginConfig map[string]string
	}
	if r == nil {
		return nil
	}
	d := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for range maxNodeSelectorConfigDocuments {
		err := d.Decode(&cfg)
		if err == nil || errors.Is(err, io.EOF) {
			break
		}
		slog.Warn("admission: PodNodeSelector: a document of the configuration does not decode; skipped, as kube does", "error", err)
	}
	return cfg.PodNodeSelectorPluginConfig
}
