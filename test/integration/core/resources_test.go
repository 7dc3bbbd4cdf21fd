package core

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestEndpoints(t *testing.T) {
	ns := namespace(t)
	eps := clientset(t).CoreV1().Endpoints(ns)
	ctx := context.Background()
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ep"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}, {IP: "10.1.0.2"}},
		Ports:     []corev1.EndpointPort{{Name: "a", Port: 80}, {Name: "b", Port: 81}},
	}}}
	got, err := eps.Create(ctx, ep, metav1.CreateOptions{})
	if err != nil || got.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("create: %v %+v", err, got)
	}
	_, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/endpoints/ep")
	if rows[0][1] != "10.1.0.1:80,10.1.0.2:80,10.1.0.1:81 + 1 more..." {
		t.Errorf("ENDPOINTS %v", rows[0][1])
	}
	// Endpoints may be created by PUT, as kube's controller does.
	r := do(t, http.MethodPut, "/api/v1/namespaces/"+ns+"/endpoints/put", `{"metadata":{"name":"put"}}`)
	if r.code != http.StatusCreated {
		t.Errorf("create by PUT: %d %s", r.code, r.body)
	}
	bad := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Subsets: []corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}}, Ports: []corev1.EndpointPort{{Port: 80}, {Port: 0, Protocol: "X"}}}, {}}}
	_, err = eps.Create(ctx, bad, metav1.CreateOptions{})
	wantInvalid(t, err,
		"subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
		"subsets[0].ports[0].name: Required value",
		"subsets[0].ports[1].name: Required value",
		"subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
		`subsets[0].ports[1].protocol: Unsupported value: "X": supported values: "SCTP", "TCP", "UDP"`,
		"subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`")
}

func TestNodes(t *testing.T) {
	nodes := clientset(t).CoreV1().Nodes()
	ctx := context.Background()
	name := "node-" + strings.ToLower(t.Name())
	n, err := nodes.Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
		Spec:       corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
		Status: corev1.NodeStatus{
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", KernelVersion: "6.1", Architecture: "amd64"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// A node keeps the status it registers with; allocatable defaults to
	// capacity; podCIDRs follows podCIDR; kube taints new nodes not-ready.
	if n.Status.Allocatable.Cpu().String() != "2" || fmt.Sprint(n.Spec.PodCIDRs) != "[10.244.0.0/24]" ||
		len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != corev1.TaintNodeNotReady || n.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Fatalf("created: %+v", n)
	}
	columns, rows := tableRows(t, "/api/v1/nodes/"+name)
	if got := fmt.Sprint(columns); got != "[Name Status Roles Age Version Internal-IP(wide) External-IP(wide) OS-Image(wide) Kernel-Version(wide) Container-Runtime(wide)]" {
		t.Errorf("columns %s", got)
	}
	if got := fmt.Sprint(rows[0][1:3], rows[0][4:]); got != "[Ready control-plane] [v1.37.2 10.0.0.5 <none> <unknown> 6.1 (amd64) <unknown>]" {
		t.Errorf("row %s", got)
	}

	// The main resource keeps status; nodes/status keeps spec.
	p, err := nodes.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"unschedulable":true},"status":{"capacity":{"cpu":"9"}}}`), metav1.PatchOptions{})
	if err != nil || !p.Spec.Unschedulable || p.Status.Capacity.Cpu().String() != "2" {
		t.Fatalf("patch: %v %+v", err, p)
	}
	p, err = nodes.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"unschedulable":false},"status":{"capacity":{"cpu":"4"}}}`),
		metav1.PatchOptions{}, "status")
	if err != nil || !p.Spec.Unschedulable || p.Status.Capacity.Cpu().String() != "4" {
		t.Fatalf("patch status: %v %+v", err, p)
	}
	_, rows = tableRows(t, "/api/v1/nodes/"+name)
	if rows[0][1] != "Ready,SchedulingDisabled" {
		t.Errorf("STATUS %v", rows[0][1])
	}
	list, err := nodes.List(ctx, metav1.ListOptions{FieldSelector: "spec.unschedulable=true,metadata.name=" + name})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("spec.unschedulable selector: %v %v", err, list)
	}
	// Nodes have their own field label conversion: no metadata.namespace.
	r := do(t, http.MethodGet, "/api/v1/nodes?fieldSelector=metadata.namespace%3D", nil)
	if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), "field label not supported: metadata.namespace") {
		t.Errorf("metadata.namespace: %d %s", r.code, r.body)
	}
	_, err = nodes.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"podCIDR":"10.245.0.0/24","podCIDRs":null}}`), metav1.PatchOptions{})
	wantInvalid(t, err, `spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid`)
}

func TestEvents(t *testing.T) {
	ns := namespace(t)
	events := clientset(t).CoreV1().Events(ns)
	ctx := context.Background()
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Reason: "Started", Message: " hi ", Type: corev1.EventTypeNormal,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns, FieldPath: "spec.containers{c}"},
		Source:         corev1.EventSource{Component: "kubelet", Host: "n1"}, Count: 3}
	if _, err := events.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []string{"reason=Started", "involvedObject.kind=Pod,involvedObject.name=p", "source=kubelet", "type=Normal",
		"involvedObject.fieldPath=spec.containers{c}", "reportingComponent="} {
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil || len(list.Items) != 1 {
			t.Errorf("%s: %v %v", sel, err, list)
		}
	}
	columns, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/events/e")
	if got := fmt.Sprint(columns); got != "[Last Seen Type Reason Object Subobject(wide) Source(wide) Message First Seen(wide) Count(wide) Name(wide)]" {
		t.Errorf("columns %s", got)
	}
	if got := fmt.Sprint(rows[0][1:7], rows[0][8:]); got != "[Normal Started pod/p spec.containers{c} kubelet, n1 hi] [3 e]" {
		t.Errorf("row %s", got)
	}
	// Events live --event-ttl (the lease shares up to a minute more).
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Server.EtcdURL}, TLS: srv.Server.EtcdTLS, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	resp, err := etcd.Get(ctx, "/registry/events/"+ns+"/e")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("event key: %v %+v", err, resp)
	}
	lease, err := etcd.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	if ttl := time.Duration(lease.GrantedTTL) * time.Second; err != nil || ttl < eventTTL || ttl > eventTTL+time.Minute {
		t.Errorf("event lease: %v, granted %ds, want %v", err, lease.GrantedTTL, eventTTL)
	}
	_, err = events.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "elsewhere"}}, metav1.CreateOptions{})
	wantInvalid(t, err, `involvedObject.namespace: Invalid value: "elsewhere": does not match event.namespace`)
}

func TestServiceAccounts(t *testing.T) {
	ns := namespace(t)
	sas := clientset(t).CoreV1().ServiceAccounts(ns)
	sa, err := sas.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"},
		Secrets: []corev1.ObjectReference{{Name: "s", Namespace: "other", UID: "u"}}}, metav1.CreateOptions{})
	if err != nil || fmt.Sprint(sa.Secrets) != fmt.Sprint([]corev1.ObjectReference{{Name: "s"}}) {
		t.Fatalf("create: %v %+v", err, sa)
	}
	columns, _ := tableRows(t, "/api/v1/namespaces/"+ns+"/serviceaccounts")
	if fmt.Sprint(columns) != "[Name Age]" {
		t.Errorf("columns %v", columns)
	}
}

func TestPersistentVolumes(t *testing.T) {
	pvs := clientset(t).CoreV1().PersistentVolumes()
	ctx := context.Background()
	name := "pv-" + strings.ToLower(t.Name())
	pv, err := pvs.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pvs.Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = pvs.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
		*pv.Spec.HostPath.Type != corev1.HostPathUnset || pv.Status.Phase != corev1.VolumePending || pv.Status.LastPhaseTransitionTime == nil ||
		!slices.Equal(pv.Finalizers, []string{"kubernetes.io/pv-protection"}) {
		t.Fatalf("created: %+v", pv)
	}
	_, rows := tableRows(t, "/api/v1/persistentvolumes/"+name)
	if got := fmt.Sprint(rows[0][1:9], " ", rows[0][10]); got != "[1Gi RWO,ROX Retain Pending   <unset> ] Filesystem" {
		t.Errorf("row %s", got)
	}
	st, err := pvs.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"persistentVolumeReclaimPolicy":"Delete"},"status":{"phase":"Available"}}`),
		metav1.PatchOptions{}, "status")
	if err != nil || st.Status.Phase != corev1.VolumeAvailable || st.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain ||
		!st.Status.LastPhaseTransitionTime.After(pv.Status.LastPhaseTransitionTime.Add(-time.Second)) {
		t.Fatalf("status: %v %+v", err, st)
	}
	_, err = pvs.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"hostPath":{"path":"/other"}}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.persistentvolumesource is immutable after creation") {
		t.Errorf("changing the source: %v", err)
	}
	_, err = pvs.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name + "-bad"}}, metav1.CreateOptions{})
	wantInvalid(t, err, "spec.accessModes: Required value", "spec.capacity: Required value",
		`spec.capacity: Unsupported value: null: supported values: "storage"`, "spec: Required value: must specify a volume type")
	// Default field label conversion: "name" is not selectable.
	r := do(t, http.MethodGet, "/api/v1/persistentvolumes?fieldSelector=name%3Dx", nil)
	if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), `\"name\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"`) {
		t.Errorf("name selector: %d %s", r.code, r.body)
	}
}

func TestPersistentVolumeClaims(t *testing.T) {
	ns := namespace(t)
	pvcs := clientset(t).CoreV1().PersistentVolumeClaims(ns)
	ctx := context.Background()
	// A claim grows only in a class that allows it (kube's
	// PersistentVolumeClaimResize admission).
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "expandable-" + ns}, Provisioner: "example.com/p", AllowVolumeExpansion: ptr(true)}
	if _, err := clientset(t).StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clientset(t).StorageV1().StorageClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	pvc, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class.Name,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}, metav1.CreateOptions{})
	if err != nil || pvc.Status.Phase != corev1.ClaimPending || *pvc.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
		!slices.Equal(pvc.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Fatalf("create: %v %+v", err, pvc)
	}
	_, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/persistentvolumeclaims/c")
	if got := fmt.Sprint(rows[0][1:7], " ", rows[0][8]); got != "[Pending    "+class.Name+" <unset>] Filesystem" {
		t.Errorf("row %s", got)
	}
	// Binding: volumeName may be set once; status through /status.
	p, err := pvcs.Patch(ctx, "c", types.MergePatchType, []byte(`{"spec":{"volumeName":"v"}}`), metav1.PatchOptions{})
	if err != nil || p.Spec.VolumeName != "v" {
		t.Fatalf("bind: %v", err)
	}
	p, err = pvcs.Patch(ctx, "c", types.MergePatchType, []byte(`{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"2Gi"}}}`),
		metav1.PatchOptions{}, "status")
	if err != nil || p.Status.Phase != corev1.ClaimBound {
		t.Fatalf("status: %v", err)
	}
	_, rows = tableRows(t, "/api/v1/namespaces/"+ns+"/persistentvolumeclaims/c")
	if got := fmt.Sprint(rows[0][1:5]); got != "[Bound v 2Gi RWO]" {
		t.Errorf("bound row %s", got)
	}
	_, err = pvcs.Patch(ctx, "c", types.MergePatchType, []byte(`{"spec":{"accessModes":["ReadWriteMany"]}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -1,6 +1,6 @@\n {\n  \"AccessModes\": [") {
		t.Errorf("immutable spec: %v", err)
	}
	// A bound claim may grow.
	if _, err := pvcs.Patch(ctx, "c", types.MergePatchType, []byte(`{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("expand: %v", err)
	}
	_, err = pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{})
	wantInvalid(t, err, "spec.accessModes: Required value: at least 1 access mode is required", "spec.resources[storage]: Required value")
}

func TestLimitRangesAndQuotas(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	lrs := clientset(t).CoreV1().LimitRanges(ns)
	lr, err := lrs.Create(ctx, &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer,
		Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Min:  corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")},
	}}}}, metav1.CreateOptions{})
	// No name: kube names it with a UUID. Defaults follow max and min.
	if err != nil || len(lr.Name) != 36 || lr.Spec.Limits[0].Default.Cpu().String() != "1" || lr.Spec.Limits[0].DefaultRequest.Cpu().String() != "1" ||
		lr.Spec.Limits[0].DefaultRequest.Memory().String() != "1Mi" {
		t.Fatalf("create: %v %+v", err, lr)
	}
	columns, rows := tableRows(t, "/api/v1/namespaces/"+ns+"/limitranges")
	if fmt.Sprint(columns) != "[Name Created At]" || rows[0][1] != lr.CreationTimestamp.UTC().Format(time.RFC3339) {
		t.Errorf("table %v %v", columns, rows)
	}
	_, err = lrs.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: "Pod", Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}, metav1.CreateOptions{})
	wantInvalid(t, err, "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'")

	quotas := clientset(t).CoreV1().ResourceQuotas(ns)
	q, err := quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:   corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), "limits.cpu": resource.MustParse("1")}},
		Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}}, metav1.CreateOptions{})
	if err != nil || q.Status.Hard != nil {
		t.Fatalf("create (status reset): %v %+v", err, q)
	}
	q.Status = corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), "limits.cpu": resource.MustParse("1")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1"), "limits.cpu": resource.MustParse("500m")},
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("99")
	st, err := quotas.UpdateStatus(ctx, q, metav1.UpdateOptions{})
	if err != nil || st.Spec.Hard.Pods().String() != "10" || st.Status.Used.Pods().String() != "1" {
		t.Fatalf("update status: %v %+v", err, st)
	}
	_, rows = tableRows(t, "/api/v1/namespaces/"+ns+"/resourcequotas/q")
	if got := fmt.Sprint(rows[0][1:3]); got != "[pods: 1/10 limits.cpu: 500m/1]" {
		t.Errorf("row %s", got)
	}
	_, err = quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1.5")}}}, metav1.CreateOptions{})
	wantInvalid(t, err, `spec.hard[pods]: Invalid value: "1500m": must be an integer`)
}

func TestLeases(t *testing.T) {
	ns := namespace(t)
	leases := clientset(t).CoordinationV1().Leases(ns)
	ctx := context.Background()
	l, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}, Spec: coordinationv1.LeaseSpec{
		HolderIdentity: ptr("me"), LeaseDurationSeconds: ptr(int32(15)), Strategy: ptr(coordinationv1.OldestEmulationVersion), PreferredHolder: ptr("x")}},
		metav1.CreateOptions{})
	// Coordinated leader election is off by default: its fields are dropped.
	if err != nil || l.Spec.Strategy != nil || l.Spec.PreferredHolder != nil {
		t.Fatalf("create: %v %+v", err, l)
	}
	_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: coordinationv1.LeaseSpec{
		LeaseDurationSeconds: ptr(int32(0)), LeaseTransitions: ptr(int32(-1))}}, metav1.CreateOptions{})
	wantInvalid(t, err, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
		"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0")
	// A lease is a lock: an update must name the revision it read...
	r := do(t, http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases/l", `{"metadata":{"name":"l"},"spec":{"holderIdentity":"you"}}`)
	if r.code != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "metadata.resourceVersion: Invalid value: 0: must be specified for an update") {
		t.Errorf("unconditional update: %d %s", r.code, r.body)
	}
	// ...but a PUT may create one.
	r = do(t, http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases/new", `{"metadata":{"name":"new"},"spec":{"holderIdentity":"you"}}`)
	if r.code != http.StatusCreated {
		t.Errorf("create by PUT: %d %s", r.code, r.body)
	}
	_, rows := tableRows(t, "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases")
	if got := fmt.Sprint(rows[0][:2], rows[1][:2]); got != "[l me] [new you]" {
		t.Errorf("rows %s", got)
	}
}
