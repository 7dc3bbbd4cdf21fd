package core

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PodTopologyLabels is kube's admission plugin of that name: a pod
// assigned a node, by pods/binding or by a create that names the node,
// gets the node's topology.kubernetes.io/zone and region labels (over
// its own), so that workloads can read their zone through the downward
// API.
type PodTopologyLabels struct {
	// Nodes reads nodes (the watch cache's, as kube's plugin reads its
	// informer's).
	Nodes rest.Getter
}

// topologyLabels are what kube-apiserver's plugin copies.
var topologyLabels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// Admit implements PodAdmitter: a new pod that names its node.
func (p *PodTopologyLabels) Admit(ctx context.Context, pod *corev1.Pod, _ string) error {
	if pod.Spec.NodeName == "" {
		return nil
	}
	return p.copyLabels(ctx, pod.Spec.NodeName, &pod.Labels)
}

// admitBinding gives a binding to a node the node's labels, which the
// binding then sets on its pod. Targets of another kind (or none) are
// left alone, as in kube.
func (p *PodTopologyLabels) admitBinding(ctx context.Context, b *corev1.Binding) error {
	if b.Target.Kind != "Node" {
		return nil
	}
	return p.copyLabels(ctx, b.Target.Name, &b.Labels)
}

// copyLabels merges node's topology labels into *labels; a node that
// does not exist has none.
func (p *PodTopologyLabels) copyLabels(ctx context.Context, node string, labels *map[string]string) error {
	obj, err := p.Nodes.Get(request.WithNamespace(ctx, ""), node, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	found := map[string]string{}
	for _, k := range topologyLabels {
		if v, ok := n.Labels[k]; ok {
			found[k] = v
		}
	}
	if len(found) == 0 {
		return nil
	}
	if *labels == nil {
		*labels = map[string]string{}
	}
	maps.Copy(*labels, found)
	return nil
}
