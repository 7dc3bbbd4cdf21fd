package placement

import (
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	storageapply "k8s.io/client-go/applyconfigurations/storage/v1"
	"k8s.io/utils/ptr"
)

// TestStorageClassLifecycle drives a class through client-go: defaults,
// an update of what may change, a watch, server-side apply, and delete.
func TestStorageClassLifecycle(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	classes := clientset(t).StorageV1().StorageClasses()
	w, err := classes.Watch(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=sc-" + ns})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sc, err := classes.Create(ctx(t), &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc-" + ns}, Provisioner: "example.com/x"}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Errorf("defaults: %v %v", *sc.ReclaimPolicy, *sc.VolumeBindingMode)
	}
	sc.AllowVolumeExpansion = ptr.To(true)
	sc.MountOptions = []string{"ro"}
	if sc, err = classes.Update(ctx(t), sc, metav1.UpdateOptions{}); err != nil || !*sc.AllowVolumeExpansion {
		t.Fatalf("update: %v %+v", err, sc)
	}
	sc.Parameters = map[string]string{"a": "b"}
	_, err = classes.Update(ctx(t), sc, metav1.UpdateOptions{})
	if st := statusOf(t, err); st.Code != http.StatusUnprocessableEntity || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "parameters" {
		t.Errorf("parameters changed: %+v", st)
	}
	applied, err := classes.Apply(ctx(t), storageapply.StorageClass("sc-"+ns).WithProvisioner("example.com/x").WithLabels(map[string]string{"tier": "gold"}),
		metav1.ApplyOptions{FieldManager: "placement-apply"})
	if err != nil || applied.Labels["tier"] != "gold" {
		t.Fatalf("apply: %v %+v", err, applied)
	}
	managers := map[string]bool{}
	for _, mf := range applied.ManagedFields {
		managers[mf.Manager+"/"+string(mf.Operation)] = true
	}
	if !managers["placement-apply/Apply"] {
		t.Errorf("managed fields: %+v", applied.ManagedFields)
	}
	deleted := false
	if err := classes.Delete(ctx(t), "sc-"+ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	types := []watch.EventType{}
	timeout := time.After(10 * time.Second)
	for !deleted {
		select {
		case ev := <-w.ResultChan():
			types = append(types, ev.Type)
			deleted = ev.Type == watch.Deleted
		case <-timeout:
			t.Fatalf("watch saw %v, no delete", types)
		}
	}
	if types[0] != watch.Added {
		t.Errorf("watch events %v", types)
	}
}

// TestVolumeAttachmentStatus: the status subresource changes only status,
// the main endpoint only spec and metadata.
func TestVolumeAttachmentStatus(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	attachments := clientset(t).StorageV1().VolumeAttachments()
	va, err := attachments.Create(ctx(t), &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "va-" + ns},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "n1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv1")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if va.Status.Attached {
		t.Error("create kept the status")
	}
	va.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"dev": "/dev/sdb"}}
	va.Labels = map[string]string{"ignored": "yes"}
	va, err = attachments.UpdateStatus(ctx(t), va, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !va.Status.Attached || va.Status.AttachmentMetadata["dev"] != "/dev/sdb" || va.Labels["ignored"] != "" {
		t.Errorf("status update: %+v", va)
	}
	va.Status.Attached = false
	va, err = attachments.Update(ctx(t), va, metav1.UpdateOptions{})
	if err != nil || !va.Status.Attached {
		t.Errorf("main endpoint changed the status: %v %+v", err, va.Status)
	}
	// kube returns the deleted object.
	if err := attachments.Delete(ctx(t), va.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := attachments.Get(ctx(t), va.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
}

// TestCSIStorageCapacityNamespaced: capacities live in namespaces, and a
// list in one sees only its own.
func TestCSIStorageCapacityNamespaced(t *testing.T) {
	t.Parallel()
	ns1, ns2 := srv.CreateNamespace(t), srv.CreateNamespace(t)
	client := clientset(t).StorageV1()
	for _, ns := range []string{ns1, ns2} {
		_, err := client.CSIStorageCapacities(ns).Create(ctx(t), &storagev1.CSIStorageCapacity{
			ObjectMeta: metav1.ObjectMeta{Name: "cap"}, StorageClassName: "sc", Capacity: ptr.To(resource.MustParse("1Gi")),
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := client.CSIStorageCapacities(ns1).List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Namespace != ns1 {
		t.Fatalf("list: %v %+v", err, list)
	}
	all, err := client.CSIStorageCapacities("").List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=cap"})
	if err != nil || len(all.Items) < 2 {
		t.Errorf("list across namespaces: %v %d", err, len(all.Items))
	}
}

// TestPriorityClasses: kube's system classes exist from the start and
// cannot be deleted; a second globalDefault class is refused. Not
// parallel: while its default class exists, every new pod of the shared
// server without a class would get it.
func TestPriorityClasses(t *testing.T) {
	ns := srv.CreateNamespace(t)
	classes := clientset(t).SchedulingV1().PriorityClasses()
	for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
		pc, err := classes.Get(ctx(t), name, metav1.GetOptions{})
		if err != nil || pc.Value != value || pc.GlobalDefault || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Errorf("%s: %v %+v", name, err, pc)
		}
		if len(pc.ManagedFields) != 1 || pc.ManagedFields[0].Manager != "kube-apiserver" {
			t.Errorf("%s managed fields: %+v", name, pc.ManagedFields)
		}
		err = classes.Delete(ctx(t), name, metav1.DeleteOptions{})
		if st := statusOf(t, err); st.Code != http.StatusForbidden || st.Message != `priorityclasses.scheduling.k8s.io "`+name+`" is forbidden: this is a system priority class and cannot be deleted` {
			t.Errorf("delete %s: %+v", name, st)
		}
	}
	def := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "default-" + ns}, Value: 100, GlobalDefault: true}
	if _, err := classes.Create(ctx(t), def, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer classes.Delete(ctx(t), def.Name, metav1.DeleteOptions{}) //nolint:errcheck // best effort
	second := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "second-" + ns}, Value: 50, GlobalDefault: true}
	_, err := classes.Create(ctx(t), second, metav1.CreateOptions{})
	want := `priorityclasses.scheduling.k8s.io "second-` + ns + `" is forbidden: PriorityClass default-` + ns + ` is already marked as default. Only one default can exist`
	if st := statusOf(t, err); st.Code != http.StatusForbidden || st.Message != want {
		t.Errorf("second default: %+v", st)
	}
	// The default class may stay the default through an update.
	if _, err := classes.Update(ctx(t), withDescription(t, def.Name, "still the default"), metav1.UpdateOptions{}); err != nil {
		t.Errorf("updating the default: %v", err)
	}
}

func withDescription(t *testing.T, name, description string) *schedulingv1.PriorityClass {
	t.Helper()
	pc, err := clientset(t).SchedulingV1().PriorityClasses().Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc.Description = description
	return pc
}

// TestRuntimeClassCreateByUpdate: a runtime class may be created by PUT
// (kube allows it), and its handler is immutable.
func TestRuntimeClassCreateByUpdate(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	classes := clientset(t).NodeV1().RuntimeClasses()
	rc, err := classes.Update(ctx(t), &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "rc-" + ns}, Handler: "runc"}, metav1.UpdateOptions{})
	if err != nil || rc.Handler != "runc" || rc.UID == "" {
		t.Fatalf("create by update: %v %+v", err, rc)
	}
	rc.Handler = "kata"
	_, err = classes.Update(ctx(t), rc, metav1.UpdateOptions{})
	if st := statusOf(t, err); st.Code != http.StatusUnprocessableEntity || st.Details.Causes[0].Message != "Invalid value: null: field is immutable" {
		t.Errorf("handler changed: %+v", st)
	}
}

// TestPodPriorityKeptOnUpdate: a pod replaced without its priority (as
// from a manifest) keeps the one admission gave it, as kube's Priority
// plugin keeps it; another priority is refused as any change of the spec
// (kube's message diffs its internal PodSpec, so the transcript does not
// record it).
func TestPodPriorityKeptOnUpdate(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	pods := clientset(t).CoreV1().Pods(ns)
	p, err := pods.Create(ctx(t), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{PriorityClassName: "system-cluster-critical", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *p.Spec.Priority != 2000000000 || *p.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatalf("created with priority %v, policy %v", *p.Spec.Priority, *p.Spec.PreemptionPolicy)
	}
	p.Spec.Priority, p.Spec.PreemptionPolicy = nil, nil
	p.Spec.Containers[0].Image = "nginx:2"
	p, err = pods.Update(ctx(t), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Priority == nil || *p.Spec.Priority != 2000000000 || p.Spec.PreemptionPolicy == nil || p.Spec.Containers[0].Image != "nginx:2" {
		t.Errorf("updated: priority %v, policy %v, image %s", p.Spec.Priority, p.Spec.PreemptionPolicy, p.Spec.Containers[0].Image)
	}
	p.Spec.Priority = ptr.To[int32](5)
	_, err = pods.Update(ctx(t), p, metav1.UpdateOptions{})
	if st := statusOf(t, err); st.Code != http.StatusUnprocessableEntity || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "spec" {
		t.Errorf("priority changed: %+v", st)
	}
}
