package node

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestNodeWritesItsOwnNode: a node registers and updates its own Node
// and status, not another's, and not labels or taints that would steer
// workloads to it.
func TestNodeWritesItsOwnNode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	n1 := nodeClient(t, f.n1)
	node := createNode(t, f.n1)
	createNode(t, f.n2)

	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	node, err := n1.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("n1 updates its Node's status: %v", err)
	}
	_, err = n1.CoreV1().Nodes().Patch(ctx, f.n2, types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
	wantForbidden(t, "n1 patches n2's status", err, sprintf(`nodes %q is forbidden: node %q is not allowed to modify node %q`, f.n2, f.n1, f.n2))
	_, err = n1.CoreV1().Nodes().Patch(ctx, f.n1, types.MergePatchType, []byte(`{"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]}}`), metav1.PatchOptions{})
	wantForbidden(t, "n1 taints itself", err, sprintf(`nodes %q is forbidden: node %q is not allowed to modify taints`, f.n1, f.n1))
	_, err = n1.CoreV1().Nodes().Patch(ctx, f.n1, types.MergePatchType, []byte(`{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`), metav1.PatchOptions{})
	wantForbidden(t, "n1 labels itself control plane", err, sprintf(`nodes %q is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane`, f.n1))
	if _, err := n1.CoreV1().Nodes().Patch(ctx, f.n1, types.MergePatchType, []byte(`{"metadata":{"labels":{"node.kubernetes.io/instance-type":"big","example.com/x":"y"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("n1 sets the kubelet's labels and its own: %v", err)
	}
	_, err = n1.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.n1 + "x"}}, metav1.CreateOptions{})
	wantForbidden(t, "n1 creates another Node", err, sprintf(`nodes %q is forbidden: node %q is not allowed to modify node %q`, f.n1+"x", f.n1, f.n1+"x"))
	n3 := f.ns + "-n3"
	_, err = nodeClient(t, n3).CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n3,
		Labels: map[string]string{"node-restriction.kubernetes.io/pool": "secure"}}}, metav1.CreateOptions{})
	wantForbidden(t, "n3 registers with a restricted label", err,
		sprintf(`nodes %q is forbidden: node %q is not allowed to set the following labels: node-restriction.kubernetes.io/pool`, n3, n3))
}

// TestNodeWritesItsPods: a node patches the status of its pods, not of
// another node's; evicts its pods only; creates only mirror pods of its
// own, and deletes only its pods.
func TestNodeWritesItsPods(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	n1 := nodeClient(t, f.n1)
	node := createNode(t, f.n1)
	createPod(t, pod(f.ns, "p1", f.n1, nil))
	createPod(t, pod(f.ns, "p2", f.n2, nil))

	status := []byte(`{"status":{"phase":"Running"}}`)
	if _, err := n1.CoreV1().Pods(f.ns).Patch(ctx, "p1", types.StrategicMergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("n1 patches its pod's status: %v", err)
	}
	_, err := n1.CoreV1().Pods(f.ns).Patch(ctx, "p2", types.StrategicMergePatchType, status, metav1.PatchOptions{}, "status")
	wantForbidden(t, "n1 patches n2's pod's status", err, sprintf(`pods "p2" is forbidden: node %q can only update pod status for pods with spec.nodeName set to itself`, f.n1))
	_, err = n1.CoreV1().Pods(f.ns).Patch(ctx, "p1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}, "status")
	wantForbidden(t, "n1 labels its pod through status", err, sprintf(`pods "p1" is forbidden: node %q cannot update labels through pod status`, f.n1))

	err = n1.PolicyV1().Evictions(f.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: f.ns}})
	wantForbidden(t, "n1 evicts n2's pod", err, sprintf(`pods "p2" is forbidden: node %s can only evict pods with spec.nodeName set to itself`, f.n1))
	err = n1.CoreV1().Pods(f.ns).Delete(ctx, "p2", metav1.DeleteOptions{})
	wantForbidden(t, "n1 deletes n2's pod", err, sprintf(`pods "p2" is forbidden: node %q can only delete pods with spec.nodeName set to itself`, f.n1))

	mirror := pod(f.ns, "static", f.n1, nil)
	_, err = n1.CoreV1().Pods(f.ns).Create(ctx, mirror, metav1.CreateOptions{})
	wantForbidden(t, "n1 creates a pod", err, sprintf(`pods "static" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node %q can only create mirror pods`, f.n1))
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	_, err = n1.CoreV1().Pods(f.ns).Create(ctx, mirror, metav1.CreateOptions{})
	wantForbidden(t, "n1 creates a mirror pod without owner", err, sprintf(`pods "static" is forbidden: node %q can only create pods with an owner reference set to itself`, f.n1))
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: f.n1, UID: node.UID, Controller: ptr.To(true)}}
	if _, err := n1.CoreV1().Pods(f.ns).Create(ctx, mirror, metav1.CreateOptions{}); err != nil {
		t.Fatalf("n1 creates its mirror pod: %v", err)
	}
	// (Secrets and service accounts are refused first by ServiceAccount,
	// as in kube.)
	withConfigMap := mirror.DeepCopy()
	withConfigMap.Name = "static-cm"
	withConfigMap.Spec.Volumes = []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}}}
	_, err = n1.CoreV1().Pods(f.ns).Create(ctx, withConfigMap, metav1.CreateOptions{})
	wantForbidden(t, "n1 creates a mirror pod with a config map", err, sprintf(`pods "static-cm" is forbidden: node %q can not create pods that reference configmaps`, f.n1))
	if err := n1.CoreV1().Pods(f.ns).Delete(ctx, "static", metav1.DeleteOptions{}); err != nil {
		t.Errorf("n1 deletes its mirror pod: %v", err)
	}
	eventually(t, "n1 evicts its pod", func() error {
		return n1.PolicyV1().Evictions(f.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: f.ns}})
	})
}

// TestNodeLease: a node creates and renews its own Lease in
// kube-node-lease, no other.
func TestNodeLease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	n1 := nodeClient(t, f.n1)
	leases := n1.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: f.n1},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(f.n1), LeaseDurationSeconds: ptr.To[int32](40)}}
	lease, err := leases.Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("n1 creates its Lease: %v", err)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: lease.CreationTimestamp.Time}
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Errorf("n1 renews its Lease: %v", err)
	}
	_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: f.n2}}, metav1.CreateOptions{})
	wantForbidden(t, "n1 creates n2's Lease", err, sprintf(`leases.coordination.k8s.io %q is forbidden: can only access node lease with the same name as the requesting node`, f.n2))
	_, err = leases.Get(ctx, f.n2, metav1.GetOptions{})
	wantForbidden(t, "n1 gets n2's Lease", err, forbiddenMsg(f.n1, "get", "leases", "coordination.k8s.io", f.n2, corev1.NamespaceNodeLease,
		"node: can only access node lease with the same name as the requesting node"))
	_, err = n1.CoordinationV1().Leases(f.ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: f.n1}}, metav1.CreateOptions{})
	wantForbidden(t, "n1 creates a Lease elsewhere", err, forbiddenMsg(f.n1, "create", "leases", "coordination.k8s.io", "", f.ns,
		`node: can only access leases in the "kube-node-lease" system namespace`))
}

// TestNodeServiceAccountTokens: a node requests tokens of its pods'
// service account, bound to its pod; not unbound, not for another node's
// pod.
func TestNodeServiceAccountTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	p1 := createPod(t, pod(f.ns, "p1", f.n1, nil))
	p2 := createPod(t, pod(f.ns, "p2", f.n2, nil))
	sa := p1.Spec.ServiceAccountName
	n1 := nodeClient(t, f.n1)
	request := func(p *corev1.Pod) *authenticationv1.TokenRequest {
		tr := &authenticationv1.TokenRequest{}
		if p != nil {
			tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}
		}
		return tr
	}
	eventually(t, "n1 requests a token bound to its pod", func() error {
		_, err := n1.CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, sa, request(p1), metav1.CreateOptions{})
		return err
	})
	_, err := n1.CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, sa, request(nil), metav1.CreateOptions{})
	wantForbidden(t, "n1 requests an unbound token", err, sprintf(`serviceaccounts %q is forbidden: node requested token not bound to a pod`, sa))
	_, err = n1.CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, sa, request(p2), metav1.CreateOptions{})
	wantForbidden(t, "n1 requests a token of n2's pod", err, sprintf(`serviceaccounts %q is forbidden: node requested token bound to a pod scheduled on a different node`, sa))
	withAudience := request(p1)
	withAudience.Spec.Audiences = []string{"vault"}
	_, err = n1.CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, sa, withAudience, metav1.CreateOptions{})
	wantForbidden(t, "n1 requests a token for an audience its pod does not use", err,
		sprintf(`serviceaccounts %q is forbidden: system:node:%s is not authorized to request tokens for audience "vault"`, sa, f.n1))
	_, err = nodeClient(t, f.n2).CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, "other", request(p2), metav1.CreateOptions{})
	wantForbidden(t, "n2 requests a token of an account no pod of it uses", err,
		forbiddenMsg(f.n2, "create", "serviceaccounts/token", "", "other", f.ns, sprintf(noRelation, f.n2)))
}
