// Package noderestriction is kube's NodeRestriction admission plugin: a
// kubelet (a user the Node authorizer knows as a node) may only change
// what is its own: its Node (without the labels, taints and config source
// that would steer workloads to it), the status of its pods, its mirror
// pods, evictions of its pods, its Lease and CSINode, its ResourceSlices,
// tokens and pod certificates for its pods, CSRs for its own name. Users
// that are no node are not restricted.
//
// Layers: an admission step of pkg/apiserver (handlers.Admission), which
// reads the objects it checks against from the registry's stores.
package noderestriction

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PluginName is kube's name of the plugin.
const PluginName = "NodeRestriction"

// Plugin is the NodeRestriction step. It refuses in the mutating phase
// (Admit), where kube runs it, before the mutating webhooks; deletes it
// checks against the object deleted (Validate), as kube's delete
// validation hands it the old object.
type Plugin struct {
	// Pods, Nodes and ServiceAccounts read the objects a node's request
	// names (the watch cache first, then etcd, as kube's listers lag).
	Pods, Nodes, ServiceAccounts rest.Getter
	// PersistentVolumeClaims, PersistentVolumes and CSIDrivers find the
	// CSI drivers of a pod's volumes, whose token audiences a node may
	// request.
	PersistentVolumeClaims, PersistentVolumes, CSIDrivers rest.Getter
	// Authorizer decides whether a node may request other audiences or
	// signers (kube's "request-serviceaccounts-token-audience" and
	// "request-serviceaccounts-podcertificate-signer" checks).
	Authorizer authorizer.Authorizer
}

var (
	_ handlers.Admission         = (*Plugin)(nil)
	_ handlers.MutatingAdmission = (*Plugin)(nil)
)

// nodeRequest is one admission request of a node.
type nodeRequest struct {
	node string
	user user.Info
	a    handlers.Attributes
	obj  runtime.Object
}

// Admit implements handlers.MutatingAdmission: creates and updates.
func (p *Plugin) Admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation == handlers.Delete {
		return nil
	}
	return p.admit(ctx, a, obj)
}

// Validate implements handlers.Admission: deletes, with the object
// deleted.
func (p *Plugin) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Delete {
		return nil
	}
	return p.admit(ctx, a, obj)
}

func (p *Plugin) admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	u, _ := request.UserFrom(ctx)
	node, isNode := authz.NodeIdentity(u)
	if !isNode {
		return nil
	}
	if node == "" {
		return a.Forbidden(obj, fmt.Errorf("could not determine node from user %q", u.GetName()))
	}
	r := &nodeRequest{node: node, user: u, a: a, obj: obj}
	switch a.Resource.GroupResource() {
	case podsResource:
		return p.admitPod(ctx, r)
	case nodesResource:
		return admitNode(r)
	case pvcsResource:
		if a.Subresource != "status" {
			return r.forbidden(fmt.Errorf("may only update PVC status"))
		}
		return admitPVCStatus(r)
	case serviceAccountsResource:
		return p.admitServiceAccount(ctx, r)
	case podCertificateRequestsResource:
		return p.admitPodCertificateRequest(ctx, r)
	case leasesResource:
		return admitLease(r)
	case csiNodesResource:
		return admitCSINode(r)
	case resourceSlicesResource:
		return admitResourceSlice(r)
	case csrsResource:
		return admitCSR(r)
	}
	return nil
}

var (
	podsResource                   = schema.GroupResource{Resource: "pods"}
	nodesResource                  = schema.GroupResource{Resource: "nodes"}
	pvcsResource                   = schema.GroupResource{Resource: "persistentvolumeclaims"}
	serviceAccountsResource        = schema.GroupResource{Resource: "serviceaccounts"}
	leasesResource                 = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	csiNodesResource               = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}
	resourceSlicesResource         = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}
	csrsResource                   = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	podCertificateRequestsResource = schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
)

func (r *nodeRequest) forbidden(err error) error { return r.a.Forbidden(r.obj, err) }

// get reads namespace/name from g: the watch cache first, then etcd when
// the cache has not seen it (yet).
func get[T runtime.Object](ctx context.Context, g rest.Getter, namespace, name string) (T, error) {
	var zero T
	if g == nil {
		return zero, fmt.Errorf("noderestriction: no store to read %s/%s from", namespace, name)
	}
	ctx = request.WithNamespace(ctx, namespace)
	obj, err := g.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = g.Get(ctx, name, &metav1.GetOptions{})
	}
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("noderestriction: %s/%s is a %T", namespace, name, obj)
	}
	return t, nil
}
