package noderestriction

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// admitNode: a node may only write its own Node, not create it with a
// config source or labels outside the kubelet's, and not change its
// config source, taints, owners or labels outside the kubelet's: each
// would let it steer workloads (and their secrets) to itself.
func admitNode(r *nodeRequest) error {
	if r.a.Name != r.node {
		return r.forbidden(fmt.Errorf("node %q is not allowed to modify node %q", r.node, r.a.Name))
	}
	switch r.a.Operation {
	case handlers.Create:
		node, ok := r.obj.(*corev1.Node)
		if !ok {
			return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
		}
		if node.Spec.ConfigSource != nil {
			return r.forbidden(fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", r.node))
		}
		if bad := forbiddenLabels(modifiedLabels(node.Labels, nil)); len(bad) > 0 {
			return r.forbidden(fmt.Errorf("node %q is not allowed to set the following labels: %s", r.node, strings.Join(bad, ", ")))
		}
	case handlers.Update:
		return admitNodeUpdate(r)
	}
	return nil
}

func admitNodeUpdate(r *nodeRequest) error {
	node, ok := r.obj.(*corev1.Node)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	old, ok := r.a.Old.(*corev1.Node)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	// Only a new non-nil source is checked: old kubelets may drop the
	// field on a status update.
	if node.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(node.Spec.ConfigSource, old.Spec.ConfigSource) {
		return r.forbidden(fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", r.node))
	}
	if !apiequality.Semantic.DeepEqual(node.Spec.Taints, old.Spec.Taints) {
		return r.forbidden(fmt.Errorf("node %q is not allowed to modify taints", r.node))
	}
	if !apiequality.Semantic.DeepEqual(node.OwnerReferences, old.OwnerReferences) {
		return r.forbidden(fmt.Errorf("node %q is not allowed to modify ownerReferences", r.node))
	}
	if bad := forbiddenLabels(modifiedLabels(node.Labels, old.Labels)); len(bad) > 0 {
		return r.forbidden(fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", ")))
	}
	return nil
}

// modifiedLabels are the keys added, removed or changed between a and b.
func modifiedLabels(a, b map[string]string) []string {
	var keys []string
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			keys = append(keys, k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}

// forbiddenLabels are the keys a node may not set, sorted: those of the
// node-restriction.kubernetes.io namespace, and those of kubernetes.io and
// k8s.io that are not the kubelet's.
func forbiddenLabels(keys []string) []string {
	var bad []string
	for _, k := range keys {
		ns := labelNamespace(k)
		if ns == corev1.LabelNamespaceNodeRestriction || strings.HasSuffix(ns, "."+corev1.LabelNamespaceNodeRestriction) ||
			isKubernetesLabel(ns) && !isKubeletLabel(k) {
			bad = append(bad, k)
		}
	}
	return bad
}

func isKubernetesLabel(ns string) bool {
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}

// kubeletLabels and kubeletLabelNamespaces are those a kubelet may set on
// its Node (k8s.io/kubelet's well-known labels).
var (
	kubeletLabels = []string{
		corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
		corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
		corev1.LabelInstanceType, corev1.LabelInstanceTypeStable, corev1.LabelOSStable, corev1.LabelArchStable,
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
	}
	kubeletLabelNamespaces = []string{corev1.LabelNamespaceSuffixKubelet, corev1.LabelNamespaceSuffixNode}
)

func isKubeletLabel(key string) bool {
	if slices.Contains(kubeletLabels, key) {
		return true
	}
	ns := labelNamespace(key)
	for _, allowed := range kubeletLabelNamespaces {
		if ns == allowed || strings.HasSuffix(ns, "."+allowed) {
			return true
		}
	}
	return false
}

func labelNamespace(key string) string {
	if prefix, _, ok := strings.Cut(key, "/"); ok {
		return prefix
	}
	return ""
}
