package authz

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// serviceAccount allows get of the service accounts of the node's pods,
// and tokens of them (NodeRestriction requires the token bound to a pod
// of the node). kube's gates of the get (credential provider tokens, pod
// certificates) are on in 1.37.
func (n *Node) serviceAccount(ctx context.Context, node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() == "get" && a.GetSubresource() == "" {
		return n.read(ctx, node, kindServiceAccount, a)
	}
	if a.GetVerb() != "create" || a.GetName() == "" {
		return authorizer.DecisionNoOpinion, "can only create tokens for individual service accounts", nil
	}
	if a.GetSubresource() != "token" {
		return authorizer.DecisionNoOpinion, "can only create token subresource of serviceaccount", nil
	}
	return n.related(ctx, node, kindServiceAccount, a)
}

// nodeLease allows a node its own Lease in kube-node-lease (a create is
// checked by name by NodeRestriction, which sees the object).
func nodeLease(node string, a authorizer.Attributes) (authorizer.Decision, string) {
	switch a.GetVerb() {
	case "get", "create", "update", "patch", "delete":
	default:
		return authorizer.DecisionNoOpinion, "can only get, create, update, patch, or delete a node lease"
	}
	if a.GetNamespace() != nodeLeaseNamespace {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", nodeLeaseNamespace)
	}
	if a.GetVerb() != "create" && a.GetName() != node {
		return authorizer.DecisionNoOpinion, "can only access node lease with the same name as the requesting node"
	}
	return authorizer.DecisionAllow, ""
}

// csiNode allows a node its own CSINode (a create is checked by name by
// NodeRestriction). Its status is kube's CSIVolumeHealth gate's, off in
// 1.37.
func csiNode(node string, a authorizer.Attributes) (authorizer.Decision, string) {
	switch a.GetSubresource() {
	case "":
		switch a.GetVerb() {
		case "get", "create", "update", "patch", "delete":
		default:
			return authorizer.DecisionNoOpinion, "can only get, create, update, patch, or delete a CSINode"
		}
	case "status":
		return authorizer.DecisionNoOpinion, "CSINode status access requires CSIVolumeHealth feature"
	default:
		return authorizer.DecisionNoOpinion, "cannot authorize CSINode subresources"
	}
	if a.GetVerb() != "create" && a.GetName() != node {
		return authorizer.DecisionNoOpinion, "can only access CSINode with the same name as the requesting node"
	}
	return authorizer.DecisionAllow, ""
}

// resourceSlice allows a node the ResourceSlices of its spec.nodeName:
// each by name, lists and watches by that field, creates (whose object
// NodeRestriction checks).
func (n *Node) resourceSlice(ctx context.Context, node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetSubresource() != "" {
		return authorizer.DecisionNoOpinion, "cannot authorize ResourceSlice subresources", nil
	}
	switch a.GetVerb() {
	case "create":
		return authorizer.DecisionAllow, "", nil
	case "get", "update", "patch", "delete":
		return n.related(ctx, node, kindResourceSlice, a)
	case "watch", "list", "deletecollection":
		if hasNodeFieldSelector(a, resourceSliceNodeName, node) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	}
	return authorizer.DecisionNoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
}

// podCertificateRequest allows a node the PodCertificateRequests of its
// spec.nodeName, and creates (which NodeRestriction checks).
func (n *Node) podCertificateRequest(ctx context.Context, node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetSubresource() != "" {
		return authorizer.DecisionNoOpinion, "nodes may not access the status subresource of PodCertificateRequests", nil
	}
	switch a.GetVerb() {
	case "create":
		return authorizer.DecisionAllow, "", nil
	case "get":
		return n.related(ctx, node, kindPodCertificateRequest, a)
	case "list", "watch":
		if hasNodeFieldSelector(a, "spec.nodeName", node) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "can only list/watch podcertificaterequests with nodeName field selector", nil
	}
	return authorizer.DecisionNoOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", a.GetVerb()), nil
}

// nodeObject allows a node to read its own Node by name (before it
// exists, too), and to create and update Nodes, which NodeRestriction
// limits to its own.
func nodeObject(node string, a authorizer.Attributes) (authorizer.Decision, string) {
	switch a.GetSubresource() {
	case "":
		switch a.GetVerb() {
		case "create", "update", "patch":
			return authorizer.DecisionAllow, ""
		case "get", "list", "watch":
			switch a.GetName() {
			case node:
				return authorizer.DecisionAllow, ""
			case "":
				return authorizer.DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node)
			default:
				return authorizer.DecisionNoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.GetName())
			}
		}
	case "status":
		switch a.GetVerb() {
		case "update", "patch":
			return authorizer.DecisionAllow, ""
		}
	}
	return authorizer.DecisionNoOpinion, ""
}

// pod allows a node to read the pods bound to it (one by name, or lists
// and watches by spec.nodeName), and to create and delete (mirror) pods,
// update their status and evict them, which NodeRestriction limits to its
// own.
func (n *Node) pod(ctx context.Context, node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.GetSubresource() {
	case "":
		switch a.GetVerb() {
		case "get":
			return n.get(ctx, node, kindPod, a)
		case "list", "watch":
			if hasNodeFieldSelector(a, "spec.nodeName", node) {
				return authorizer.DecisionAllow, "", nil
			}
			if a.GetName() != "" {
				return n.related(ctx, node, kindPod, a)
			}
			return authorizer.DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			return authorizer.DecisionAllow, "", nil
		}
	case "status":
		switch a.GetVerb() {
		case "update", "patch":
			return authorizer.DecisionAllow, "", nil
		}
	case "eviction":
		if a.GetVerb() == "create" {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}
