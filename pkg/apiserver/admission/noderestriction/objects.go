package noderestriction

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// nodeLeaseNamespace holds the nodes' heartbeat Leases.
const nodeLeaseNamespace = "kube-node-lease"

// admitPVCStatus: a node may change a claim's status capacity and
// conditions (and allocated resources), nothing else.
func admitPVCStatus(r *nodeRequest) error {
	if r.a.Operation != handlers.Update {
		return r.forbidden(fmt.Errorf("unexpected operation %q", r.a.Operation))
	}
	old, ok := r.a.Old.(*corev1.PersistentVolumeClaim)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.a.Old))
	}
	pvc, ok := r.obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	old, pvc = old.DeepCopy(), pvc.DeepCopy()
	for _, c := range []*corev1.PersistentVolumeClaim{old, pvc} {
		// An update may leave out the resourceVersion (unconditional);
		// managed fields change with every write.
		c.ResourceVersion, c.ManagedFields = "", nil
		c.Status.Capacity, c.Status.Conditions = nil, nil
		c.Status.AllocatedResourceStatuses, c.Status.AllocatedResources = nil, nil
	}
	if !apiequality.Semantic.DeepEqual(old, pvc) {
		return r.forbidden(fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions: %v", r.node, diff.Diff(old, pvc)))
	}
	return nil
}

// admitLease: a node may only write its own Lease in kube-node-lease.
func admitLease(r *nodeRequest) error {
	if r.a.Namespace != nodeLeaseNamespace {
		return r.forbidden(fmt.Errorf("can only access leases in the %q system namespace", nodeLeaseNamespace))
	}
	name := r.a.Name
	if r.a.Operation == handlers.Create {
		lease, ok := r.obj.(*coordinationv1.Lease)
		if !ok {
			return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
		}
		name = lease.Name
	}
	if name != r.node {
		return r.forbidden(fmt.Errorf("can only access node lease with the same name as the requesting node"))
	}
	return nil
}

// admitCSINode: a node may only write its own CSINode. Its status is
// kube's CSIVolumeHealth gate's, off in 1.37.
func admitCSINode(r *nodeRequest) error {
	name := r.a.Name
	if r.a.Operation == handlers.Create {
		m, err := meta.Accessor(r.obj)
		if err != nil {
			return r.forbidden(fmt.Errorf("unable to access the object name"))
		}
		name = m.GetName()
	}
	if name != r.node {
		return r.forbidden(fmt.Errorf("can only access CSINode with the same name as the requesting node"))
	}
	if r.a.Subresource == "status" {
		return r.forbidden(fmt.Errorf("CSIVolumeHealth feature gate is disabled"))
	}
	return nil
}

// admitResourceSlice: a node may only create and delete the slices of its
// own spec.nodeName (the Node authorizer checks the others by the stored
// object).
func admitResourceSlice(r *nodeRequest) error {
	var verb string
	switch r.a.Operation {
	case handlers.Create:
		verb = "create"
	case handlers.Delete:
		verb = "delete"
	default:
		return nil
	}
	slice, ok := r.obj.(*resourcev1.ResourceSlice)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	if slice.Spec.NodeName == nil || *slice.Spec.NodeName != r.node {
		return r.forbidden(fmt.Errorf("can only %s ResourceSlice with the same NodeName as the requesting node", verb))
	}
	return nil
}

// The signers whose certificates name a node.
const (
	kubeletServingSigner = "kubernetes.io/kubelet-serving"
	kubeletClientSigner  = "kubernetes.io/kube-apiserver-client-kubelet"
)

// admitCSR: a node's CSR for a kubelet serving or client certificate must
// name that node (kube's AllowInsecureKubeletCertificateSigningRequests
// gate is off in 1.37).
func admitCSR(r *nodeRequest) error {
	if r.a.Operation != handlers.Create {
		return nil
	}
	csr, ok := r.obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	if csr.Spec.SignerName != kubeletServingSigner && csr.Spec.SignerName != kubeletClientSigner {
		return nil
	}
	cr, err := ParseCSR(csr.Spec.Request)
	if err != nil {
		return r.forbidden(fmt.Errorf("unable to parse csr: %w", err))
	}
	if cr.Subject.CommonName != "system:node:"+r.node {
		return r.forbidden(fmt.Errorf("can only create a node CSR with CN=system:node:%s", r.node))
	}
	return nil
}

// ParseCSR is kube's certificates ParseCSR: the PEM CERTIFICATE REQUEST
// (the certificates admission plugins read it too).
func ParseCSR(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
