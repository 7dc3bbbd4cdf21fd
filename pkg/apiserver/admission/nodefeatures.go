package admission

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// NodeDeclaredFeatureValidator is kube's plugin of that name, for pods:
// an update of a pod on a node (the pod itself or pods/resize) that
// needs a node feature (resizing pod-level resources, a non-sidecar init
// container, ...) is refused unless the node declares it in
// status.declaredFeatures. Which updates need which feature is kube's
// own library's (k8s.io/component-helpers/nodedeclaredfeatures). Its
// check of ResourceSlices needs the DRANodeAllocatableResources feature
// gate, off in kube 1.37, and is not run.
type NodeDeclaredFeatureValidator struct {
	// Nodes reads nodes (from the watch cache).
	Nodes rest.Getter
	// Version is the server's Kubernetes version: features newer
	// servers need no longer are not asked of nodes.
	Version *version.Version
}

// Validate implements handlers.Admission.
func (v *NodeDeclaredFeatureValidator) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Subresource != "" && a.Subresource != "resize" {
		return nil
	}
	old, pod, err := boundPodSpecUpdate(a, obj)
	if err != nil || pod == nil {
		return err
	}
	reqs, err := ndf.DefaultFramework.InferForPodUpdate(&ndf.PodInfo{Spec: &old.Spec, Status: &old.Status},
		&ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, v.Version)
	if err != nil {
		return forbidden(a, fmt.Errorf("failed to infer pod capability requirements: %w", err))
	}
	if reqs.IsEmpty() {
		return nil
	}
	node, err := podNode(ctx, a, v.Nodes, pod)
	if err != nil {
		return err
	}
	result, err := ndf.DefaultFramework.MatchNode(reqs, node)
	if err != nil {
		return forbidden(a, fmt.Errorf("failed to match pod requirements against node %q: %w", node.Name, err))
	}
	if !result.IsMatch {
		return forbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q",
			strings.Join(result.UnsatisfiedRequirements, ", "), node.Name))
	}
	return nil
}
