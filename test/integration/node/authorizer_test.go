package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
)

const noRelation = "node: no relationship found between node '%s' and this object"

// TestNodeReadsWhatItsPodsUse: a node may get the secrets, config maps and
// claims its pods reference, and no other; a secret of a pod on another
// node stays hidden.
func TestNodeReadsWhatItsPodsUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := admin(t)
	for _, name := range []string{"s1", "s2", "env-secret"} {
		if _, err := a.CoreV1().Secrets(f.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.CoreV1().ConfigMaps(f.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	volumes := []corev1.Volume{
		{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s1"}}},
		{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c1"}}}},
	}
	env := corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "env-secret"}, Key: "k"}}}
	createPod(t, pod(f.ns, "p1", f.n1, volumes, env))
	createPod(t, pod(f.ns, "p2", f.n2, []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s2"}}}}))

	n1 := nodeClient(t, f.n1)
	for _, name := range []string{"s1", "env-secret"} {
		eventually(t, "n1 gets secret "+name, func() error {
			_, err := n1.CoreV1().Secrets(f.ns).Get(ctx, name, metav1.GetOptions{})
			return err
		})
	}
	eventually(t, "n1 gets config map c1", func() error {
		_, err := n1.CoreV1().ConfigMaps(f.ns).Get(ctx, "c1", metav1.GetOptions{})
		return err
	})
	// The kubelet watches each secret by name.
	w, err := n1.CoreV1().Secrets(f.ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "s1").String()})
	if err != nil {
		t.Fatalf("n1 watches secret s1: %v", err)
	}
	w.Stop()

	_, err = n1.CoreV1().Secrets(f.ns).Get(ctx, "s2", metav1.GetOptions{})
	wantForbidden(t, "n1 gets n2's secret", err, forbiddenMsg(f.n1, "get", "secrets", "", "s2", f.ns, sprintf(noRelation, f.n1)))
	_, err = n1.CoreV1().Secrets(f.ns).List(ctx, metav1.ListOptions{})
	wantForbidden(t, "n1 lists secrets", err, forbiddenMsg(f.n1, "list", "secrets", "", "", f.ns, "node: No Object name found"))
	_, err = n1.CoreV1().Secrets(f.ns).Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}, metav1.UpdateOptions{})
	wantForbidden(t, "n1 updates its secret", err, forbiddenMsg(f.n1, "update", "secrets", "", "s1", f.ns, "node: can only read resources of this type"))
	_, err = nodeClient(t, f.n2).CoreV1().ConfigMaps(f.ns).Get(ctx, "c1", metav1.GetOptions{})
	wantForbidden(t, "n2 gets n1's config map", err, forbiddenMsg(f.n2, "get", "configmaps", "", "c1", f.ns, sprintf(noRelation, f.n2)))
}

// TestNodeReadsItsVolumes: a node may get the claims of its pods, the
// volumes bound to them, their node secrets and their attachments to it.
func TestNodeReadsItsVolumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := admin(t)
	pvName, vaName := f.ns+"-pv", f.ns+"-va"
	if _, err := a.CoreV1().Secrets(f.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "csi-secret"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim1"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pvName, StorageClassName: ptr.To(""),
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if _, err := a.CoreV1().PersistentVolumeClaims(f.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}, Spec: corev1.PersistentVolumeSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		ClaimRef:    &corev1.ObjectReference{Namespace: f.ns, Name: "claim1"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
			Driver: "csi.example.com", VolumeHandle: "h1",
			NodePublishSecretRef: &corev1.SecretReference{Namespace: f.ns, Name: "csi-secret"}}},
	}}
	if _, err := a.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: vaName}, Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "csi.example.com", NodeName: f.n1, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}}}
	if _, err := a.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, pod(f.ns, "p1", f.n1, []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim1"}}}}))

	n1 := nodeClient(t, f.n1)
	eventually(t, "n1 gets its claim", func() error {
		_, err := n1.CoreV1().PersistentVolumeClaims(f.ns).Get(ctx, "claim1", metav1.GetOptions{})
		return err
	})
	eventually(t, "n1 gets its volume", func() error {
		_, err := n1.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
		return err
	})
	eventually(t, "n1 gets its volume's node publish secret", func() error {
		_, err := n1.CoreV1().Secrets(f.ns).Get(ctx, "csi-secret", metav1.GetOptions{})
		return err
	})
	eventually(t, "n1 gets its attachment", func() error {
		_, err := n1.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
		return err
	})

	n2 := nodeClient(t, f.n2)
	_, err := n2.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
	wantForbidden(t, "n2 gets n1's volume", err, forbiddenMsg(f.n2, "get", "persistentvolumes", "", pvName, "", sprintf(noRelation, f.n2)))
	_, err = n2.CoreV1().Secrets(f.ns).Get(ctx, "csi-secret", metav1.GetOptions{})
	wantForbidden(t, "n2 gets n1's volume secret", err, forbiddenMsg(f.n2, "get", "secrets", "", "csi-secret", f.ns, sprintf(noRelation, f.n2)))
	_, err = n2.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
	wantForbidden(t, "n2 gets n1's attachment", err, forbiddenMsg(f.n2, "get", "volumeattachments", "storage.k8s.io", vaName, "", sprintf(noRelation, f.n2)))
	_, err = n1.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	wantForbidden(t, "n1 lists volumes", err, forbiddenMsg(f.n1, "list", "persistentvolumes", "", "", "", "node: can only get individual resources of this type"))
}

// TestNodeReadsItsPodsAndNode: a node may read its own Node and the pods
// bound to it, by name or by a spec.nodeName field selector.
func TestNodeReadsItsPodsAndNode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	createNode(t, f.n1)
	createNode(t, f.n2)
	createPod(t, pod(f.ns, "p1", f.n1, nil))
	createPod(t, pod(f.ns, "p2", f.n2, nil))
	n1 := nodeClient(t, f.n1)

	if _, err := n1.CoreV1().Nodes().Get(ctx, f.n1, metav1.GetOptions{}); err != nil {
		t.Errorf("n1 gets its Node: %v", err)
	}
	_, err := n1.CoreV1().Nodes().Get(ctx, f.n2, metav1.GetOptions{})
	wantForbidden(t, "n1 gets n2's Node", err, forbiddenMsg(f.n1, "get", "nodes", "", f.n2, "",
		sprintf("node: node '%s' cannot read '%s', only its own Node object", f.n1, f.n2)))
	_, err = n1.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	wantForbidden(t, "n1 lists Nodes", err, forbiddenMsg(f.n1, "list", "nodes", "", "", "",
		sprintf("node: node '%s' cannot read all nodes, only its own Node object", f.n1)))

	eventually(t, "n1 gets its pod", func() error {
		_, err := n1.CoreV1().Pods(f.ns).Get(ctx, "p1", metav1.GetOptions{})
		return err
	})
	_, err = n1.CoreV1().Pods(f.ns).Get(ctx, "p2", metav1.GetOptions{})
	wantForbidden(t, "n1 gets n2's pod", err, forbiddenMsg(f.n1, "get", "pods", "", "p2", f.ns, sprintf(noRelation, f.n1)))
	pods, err := n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + f.n1})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "p1" {
		t.Errorf("n1 lists its pods: %v %v", pods, err)
	}
	_, err = n1.CoreV1().Pods(f.ns).List(ctx, metav1.ListOptions{})
	wantForbidden(t, "n1 lists all pods", err, forbiddenMsg(f.n1, "list", "pods", "", "", f.ns,
		"node: can only list/watch pods with spec.nodeName field selector"))
}
