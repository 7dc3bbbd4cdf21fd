package authz

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
)

// nodeUserPrefix starts the user name of a node's credentials.
const nodeUserPrefix = "system:node:"

// NodeIdentity returns the name of the node a user is, as kube's
// nodeidentifier: a user of group system:nodes named system:node:NAME is
// node NAME (possibly "", a node that cannot be told apart); any other
// user is no node.
func NodeIdentity(u user.Info) (name string, isNode bool) {
	if u == nil || !strings.HasPrefix(u.GetName(), nodeUserPrefix) || !slices.Contains(u.GetGroups(), user.NodesGroup) {
		return "", false
	}
	return strings.TrimPrefix(u.GetName(), nodeUserPrefix), true
}

// Node is kube's Node authorizer (the Node mode): it decides what a
// kubelet (see NodeIdentity) may do. Reads of secrets, config maps,
// claims, volumes, attachments, service accounts and pods are allowed
// only for objects related to the node by the pods bound to it (see
// NodeObjects); its own Node and Lease by name; the rest by the static
// rules of kube's system:node role. Everything else, and every request
// of a user that is no node, gets no opinion, so that the next mode (RBAC)
// decides, with kube's reasons.
//
// kube keeps a graph of these relations, fed by informers; this one reads
// them from the watch cache on each request, which sees the same events.
type Node struct {
	objects NodeObjects
	rules   []rbacv1.PolicyRule
}

var (
	_ authorizer.Authorizer   = (*Node)(nil)
	_ authorizer.RuleResolver = (*Node)(nil)
)

// NewNode returns the Node authorizer reading objects, which allows what
// rules (kube's system:node role's) allow for the resources it does not
// decide itself.
func NewNode(objects NodeObjects, rules []rbacv1.PolicyRule) *Node {
	return &Node{objects: objects, rules: rules}
}

// The resources the Node authorizer decides itself.
var (
	secretsResource       = schema.GroupResource{Resource: "secrets"}
	configMapsResource    = schema.GroupResource{Resource: "configmaps"}
	podsResource          = schema.GroupResource{Resource: "pods"}
	nodesResource         = schema.GroupResource{Resource: "nodes"}
	pvcsResource          = schema.GroupResource{Resource: "persistentvolumeclaims"}
	pvsResource           = schema.GroupResource{Resource: "persistentvolumes"}
	serviceAccountsRes    = schema.GroupResource{Resource: "serviceaccounts"}
	resourceSlicesRes     = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}
	resourceClaimsRes     = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}
	volumeAttachmentsRes  = schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}
	leasesResource        = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	csiNodesResource      = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}
	podCertRequestsRes    = schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
	nodeLeaseNamespace    = "kube-node-lease"
	resourceSliceNodeName = "spec.nodeName"
)

// Authorize implements authorizer.Authorizer.
func (n *Node) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode := NodeIdentity(a.GetUser())
	if !isNode {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", a.GetUser().GetName()), nil
	}
	if a.IsResourceRequest() {
		if d, decided, err := n.decide(ctx, node, a); decided {
			return d.decision, d.reason, err
		}
	}
	if rbacrules.RulesAllow(a, n.rules...) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// decision is a decision with its reason.
type decision struct {
	decision authorizer.Decision
	reason   string
}

// decide decides the resources the authorizer subdivides, as kube's
// (decided: true); the others are left to the static rules.
func (n *Node) decide(ctx context.Context, node string, a authorizer.Attributes) (decision, bool, error) {
	var (
		d   authorizer.Decision
		r   string
		err error
	)
	switch (schema.GroupResource{Group: a.GetAPIGroup(), Resource: a.GetResource()}) {
	case secretsResource:
		d, r, err = n.read(ctx, node, kindSecret, a)
	case configMapsResource:
		d, r, err = n.read(ctx, node, kindConfigMap, a)
	case pvcsResource:
		if a.GetSubresource() == "status" {
			d, r, err = n.statusUpdate(ctx, node, kindPVC, a)
		} else {
			d, r, err = n.get(ctx, node, kindPVC, a)
		}
	case pvsResource:
		d, r, err = n.get(ctx, node, kindPV, a)
	case resourceClaimsRes:
		d, r, err = n.get(ctx, node, kindResourceClaim, a)
	case volumeAttachmentsRes:
		d, r, err = n.get(ctx, node, kindVolumeAttachment, a)
	case serviceAccountsRes:
		d, r, err = n.serviceAccount(ctx, node, a)
	case leasesResource:
		d, r = nodeLease(node, a)
	case csiNodesResource:
		d, r = csiNode(node, a)
	case resourceSlicesRes:
		d, r, err = n.resourceSlice(ctx, node, a)
	case nodesResource:
		d, r = nodeObject(node, a)
	case podsResource:
		d, r, err = n.pod(ctx, node, a)
	case podCertRequestsRes:
		d, r, err = n.podCertificateRequest(ctx, node, a)
	default:
		return decision{}, false, nil
	}
	return decision{d, r}, true, err
}

// read allows get, list and watch of one namespaced object related to
// node (a list or watch names it by a metadata.name field selector).
func (n *Node) read(ctx context.Context, node string, k objectKind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.GetVerb() {
	case "get", "list", "watch":
	default:
		return authorizer.DecisionNoOpinion, "can only read resources of this type", nil
	}
	if a.GetSubresource() != "" {
		return authorizer.DecisionNoOpinion, "cannot read subresource", nil
	}
	if a.GetNamespace() == "" {
		return authorizer.DecisionNoOpinion, "can only read namespaced object of this type", nil
	}
	return n.related(ctx, node, k, a)
}

// get allows get of one object related to node.
func (n *Node) get(ctx context.Context, node string, k objectKind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() != "get" {
		return authorizer.DecisionNoOpinion, "can only get individual resources of this type", nil
	}
	if a.GetSubresource() != "" {
		return authorizer.DecisionNoOpinion, "cannot get subresource", nil
	}
	return n.related(ctx, node, k, a)
}

// statusUpdate allows update and patch of the status of an object related
// to node (NodeRestriction keeps the rest of the object as it was).
func (n *Node) statusUpdate(ctx context.Context, node string, k objectKind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.GetVerb() {
	case "update", "patch":
	default:
		return authorizer.DecisionNoOpinion, "can only get/update/patch this type", nil
	}
	return n.related(ctx, node, k, a)
}

// related allows a when the object it names is related to node. An error
// reading the relations is no relation: the reason is kube's either way,
// the error is logged.
func (n *Node) related(ctx context.Context, node string, k objectKind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetName() == "" {
		return authorizer.DecisionNoOpinion, "No Object name found", nil
	}
	ok, err := relatedToNode(ctx, n.objects, node, k, a.GetNamespace(), a.GetName())
	if err != nil {
		slog.Debug("node authorizer: no relationship", "node", node, "kind", k, "namespace", a.GetNamespace(), "name", a.GetName(), "error", err)
	}
	if !ok {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
	}
	return authorizer.DecisionAllow, "", nil
}

// RulesFor implements authorizer.RuleResolver: a node's rules cannot be
// listed (they depend on its pods), as kube says.
func (n *Node) RulesFor(_ context.Context, u user.Info, _ string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	if _, isNode := NodeIdentity(u); isNode {
		return nil, nil, true, fmt.Errorf("node authorizer does not support user rule resolution")
	}
	return nil, nil, false, nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer: the Node
// authorizer has no conditions.
func (n *Node) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(n.Authorize(ctx, a))
}

// EvaluateConditions implements authorizer.Authorizer: there are none.
func (*Node) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// hasNodeFieldSelector reports whether a list or watch is limited to the
// objects of node by field (an exact spec.nodeName=node).
func hasNodeFieldSelector(a authorizer.Attributes, field, node string) bool {
	reqs, _ := a.GetFieldSelector()
	for _, r := range reqs {
		if r.Field == field && r.Operator == selection.Equals && r.Value == node {
			return true
		}
	}
	return false
}
