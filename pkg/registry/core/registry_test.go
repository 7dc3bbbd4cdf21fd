package core_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/defaultservicecidr"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on core resources,
// each over the core group built as the server builds it.
func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resource string
		tester   func(info rest.APIGroupInfo, t *testing.T) registrytest.Tester
	}{
		{"configmaps", configMapTester},
		{"secrets", secretTester},
		{"pods", podTester},
		{"services", serviceTester},
		{"namespaces", namespaceTester},
		{"nodes", nodeTester},
		{"replicationcontrollers", replicationControllerTester},
		{"serviceaccounts", serviceAccountTester},
		{"persistentvolumes", persistentVolumeTester},
		{"resourcequotas", resourceQuotaTester},
		{"limitranges", limitRangeTester},
		{"endpoints", endpointsTester},
		{"podtemplates", podTemplateTester},
		{"events", eventTester},
		{"persistentvolumeclaims", persistentVolumeClaimTester},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			t.Parallel()
			info := buildCore(t)
			tr := tc.tester(info, t)
			tr.Storage = registrytest.Storage(t, info, tc.resource).(registrytest.ResourceStorage)
			tr.Run(t)
		})
	}
}

// buildCore builds the core group over an etcd of t's own, with the
// default ServiceCIDR ready and the service allocators repaired, as the
// server has them before it serves.
func buildCore(t *testing.T) rest.APIGroupInfo {
	t.Helper()
	getter := registrytest.NewGetter(t)
	net, netInfo, err := networking.RESTStorageProvider{}.NewGroupStorage(getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(netInfo.Destroy)
	cidr := defaultservicecidr.New(net.ServiceCIDRs, net.ServiceCIDRStatus, core.DefaultServiceClusterIPRange)
	if err := cidr.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	legacy, info, err := core.RESTStorageProvider{NoPodServiceAccount: true}.NewGroupStorage(getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	if err := legacy.ServiceRepair.RepairIPs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := legacy.ServiceRepair.RepairPorts(context.Background()); err != nil {
		t.Fatal(err)
	}
	return info
}

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func configMapTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.ConfigMap{ObjectMeta: meta(name), Data: map[string]string{"k": "v"}}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.ConfigMap{ObjectMeta: meta(name), Data: map[string]string{"not a key!": "v"}}
		},
		Change:                   func(obj runtime.Object) { obj.(*corev1.ConfigMap).Data["k"] += "+" },
		AllowUnconditionalUpdate: true,
	}
}

func secretTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.Secret{ObjectMeta: meta(name), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.Secret{ObjectMeta: meta(name), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"k": []byte("v")}}
		},
		Change:                   func(obj runtime.Object) { obj.(*corev1.Secret).Data["k"] = append(obj.(*corev1.Secret).Data["k"], '+') },
		AllowUnconditionalUpdate: true,
	}
}

func podTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.Pod{ObjectMeta: meta(name), Spec: corev1.PodSpec{
				NodeName:   "node-1",
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			}}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.Pod{ObjectMeta: meta(name), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
		},
		Change:                   func(obj runtime.Object) { obj.(*corev1.Pod).Spec.Containers[0].Image = "busybox:2" },
		GracePeriod:              corev1.DefaultTerminationGracePeriodSeconds,
		AllowUnconditionalUpdate: true,
		Status: &registrytest.StatusCheck{
			Storage:      registrytest.StatusStorage(t, info, "pods"),
			ChangeSpec:   func(obj runtime.Object) { obj.(*corev1.Pod).Spec.Containers[0].Image = "busybox:3" },
			ChangeStatus: func(obj runtime.Object) { obj.(*corev1.Pod).Status.Message = "registrytest" },
		},
	}
}

func serviceTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.Service{ObjectMeta: meta(name), Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": name},
				Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
			}}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.Service{ObjectMeta: meta(name), Spec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{{Port: 0, Protocol: corev1.ProtocolTCP}},
			}}
		},
		Change:                   func(obj runtime.Object) { obj.(*corev1.Service).Spec.Selector["tier"] = "x" },
		AllowUnconditionalUpdate: true,
		AllowCreateOnUpdate:      true,
		Status: &registrytest.StatusCheck{
			Storage:    registrytest.StatusStorage(t, info, "services"),
			ChangeSpec: func(obj runtime.Object) { obj.(*corev1.Service).Spec.Selector = map[string]string{"app": "changed"} },
			ChangeStatus: func(obj runtime.Object) {
				obj.(*corev1.Service).Status.Conditions = []metav1.Condition{{
					Type: "Ready", Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Unix(1, 0)}}
			},
		},
	}
}

func namespaceTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	finalize := registrytest.Storage(t, info, "namespaces/finalize").(rest.Updater)
	namespaces := registrytest.Storage(t, info, "namespaces").(rest.Getter)
	return registrytest.Tester{
		Valid:                    func(name string) runtime.Object { return &corev1.Namespace{ObjectMeta: meta(name)} },
		Invalid:                  func(name string) runtime.Object { return &corev1.Namespace{ObjectMeta: meta(name + ".not.a.label")} },
		AllowUnconditionalUpdate: true,
		// The namespace controller empties spec.finalizers, which
		// finishes the deletion.
		Finish: func(ctx context.Context, name string) error {
			obj, err := namespaces.Get(ctx, name, &metav1.GetOptions{})
			if err != nil {
				return err
			}
			ns := obj.(*corev1.Namespace)
			ns.Spec.Finalizers = nil
			_, _, err = finalize.Update(ctx, name, &rest.DefaultUpdatedObjectInfo{Obj: ns}, nil, nil, false, &metav1.UpdateOptions{})
			return err
		},
		Status: &registrytest.StatusCheck{
			Storage: registrytest.StatusStorage(t, info, "namespaces"),
			// A namespace's spec changes only through /finalize.
			ChangeStatus: func(obj runtime.Object) {
				obj.(*corev1.Namespace).Status.Conditions = []corev1.NamespaceCondition{{
					Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse, Reason: "Test"}}
			},
		},
	}
}

func nodeTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object { return &corev1.Node{ObjectMeta: meta(name)} },
		Invalid: func(name string) runtime.Object {
			return &corev1.Node{ObjectMeta: meta(name), Spec: corev1.NodeSpec{PodCIDRs: []string{"not a cidr"}}}
		},
		Change: func(obj runtime.Object) {
			obj.(*corev1.Node).Spec.Unschedulable = !obj.(*corev1.Node).Spec.Unschedulable
		},
		AllowUnconditionalUpdate: true,
		Status: &registrytest.StatusCheck{
			Storage:    registrytest.StatusStorage(t, info, "nodes"),
			ChangeSpec: func(obj runtime.Object) { obj.(*corev1.Node).Spec.Unschedulable = true },
			ChangeStatus: func(obj runtime.Object) {
				cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
				obj.(*corev1.Node).Status.Capacity, obj.(*corev1.Node).Status.Allocatable = cpu, cpu
			},
		},
	}
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst},
	}
}

func replicationControllerTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	rc := func(obj runtime.Object) *corev1.ReplicationController { return obj.(*corev1.ReplicationController) }
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			tmpl := podTemplate()
			return &corev1.ReplicationController{ObjectMeta: meta(name), Spec: corev1.ReplicationControllerSpec{
				Replicas: ptr.To[int32](1), Selector: map[string]string{"app": "x"}, Template: &tmpl}}
		},
		Invalid: func(name string) runtime.Object {
			tmpl := podTemplate()
			return &corev1.ReplicationController{ObjectMeta: meta(name), Spec: corev1.ReplicationControllerSpec{
				Replicas: ptr.To[int32](1), Selector: map[string]string{"app": "other"}, Template: &tmpl}}
		},
		Change:                   func(obj runtime.Object) { rc(obj).Spec.Replicas = ptr.To[int32](3) },
		AllowUnconditionalUpdate: true,
		// Deletes of v1 controllers orphan their pods: the orphan
		// finalizer stays until the garbage collector removes it.
		Finish: registrytest.RemoveFinalizers(registrytest.Storage(t, info, "replicationcontrollers")),
		Status: &registrytest.StatusCheck{
			Storage:      registrytest.StatusStorage(t, info, "replicationcontrollers"),
			ChangeSpec:   func(obj runtime.Object) { rc(obj).Spec.Replicas = ptr.To[int32](4) },
			ChangeStatus: func(obj runtime.Object) { rc(obj).Status.Replicas = 1 },
		},
		Scale: &registrytest.ScaleCheck{
			Storage: registrytest.Storage(t, info, "replicationcontrollers/scale").(interface {
				rest.Getter
				rest.Updater
			}),
			Replicas: func(obj runtime.Object) int32 { return *rc(obj).Spec.Replicas },
		},
	}
}

func serviceAccountTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object { return &corev1.ServiceAccount{ObjectMeta: meta(name)} },
		Invalid: func(name string) runtime.Object {
			return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"not a key": "v"}}}
		},
		AllowUnconditionalUpdate: true,
	}
}

func persistentVolumeTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	pv := func(obj runtime.Object) *corev1.PersistentVolume { return obj.(*corev1.PersistentVolume) }
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.PersistentVolume{ObjectMeta: meta(name), Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/x"}},
			}}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.PersistentVolume{ObjectMeta: meta(name)}
		},
		AllowUnconditionalUpdate: true,
		Status: &registrytest.StatusCheck{
			Storage: registrytest.StatusStorage(t, info, "persistentvolumes"),
			ChangeSpec: func(obj runtime.Object) {
				pv(obj).Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
			},
			ChangeStatus: func(obj runtime.Object) { pv(obj).Status.Message = "registrytest" },
		},
	}
}

func resourceQuotaTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	rq := func(obj runtime.Object) *corev1.ResourceQuota { return obj.(*corev1.ResourceQuota) }
	pods := func(n string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourcePods: resource.MustParse(n)}
	}
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.ResourceQuota{ObjectMeta: meta(name), Spec: corev1.ResourceQuotaSpec{Hard: pods("10")}}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.ResourceQuota{ObjectMeta: meta(name), Spec: corev1.ResourceQuotaSpec{Hard: pods("-1")}}
		},
		AllowUnconditionalUpdate: true,
		Status: &registrytest.StatusCheck{
			Storage:      registrytest.StatusStorage(t, info, "resourcequotas"),
			ChangeSpec:   func(obj runtime.Object) { rq(obj).Spec.Hard = pods("20") },
			ChangeStatus: func(obj runtime.Object) { rq(obj).Status.Hard, rq(obj).Status.Used = pods("10"), pods("1") },
		},
	}
}

func limitRangeTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	limits := func(max string) corev1.LimitRangeSpec {
		return corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(max)}}}}
	}
	return registrytest.Tester{
		Valid: func(name string) runtime.Object { return &corev1.LimitRange{ObjectMeta: meta(name), Spec: limits("2")} },
		Invalid: func(name string) runtime.Object {
			lr := &corev1.LimitRange{ObjectMeta: meta(name), Spec: limits("2")}
			lr.Spec.Limits[0].Min = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
			return lr
		},
		Skip:                     map[string]string{"create/no name": "kube names a limit range created without a name (a UUID)"},
		Change:                   func(obj runtime.Object) { obj.(*corev1.LimitRange).Spec = limits("3") },
		AllowUnconditionalUpdate: true,
		AllowCreateOnUpdate:      true,
	}
}

func endpointsTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	subsets := func(ip string) []corev1.EndpointSubset {
		return []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}, Ports: []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	}
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.Endpoints{ObjectMeta: meta(name), Subsets: subsets("10.1.0.1")}
		},
		Invalid: func(name string) runtime.Object {
			return &corev1.Endpoints{ObjectMeta: meta(name), Subsets: subsets("not an ip")}
		},
		Change:                   func(obj runtime.Object) { obj.(*corev1.Endpoints).Subsets = subsets("10.1.0.2") },
		AllowUnconditionalUpdate: true,
		AllowCreateOnUpdate:      true,
	}
}

func podTemplateTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	return registrytest.Tester{
		Valid: func(name string) runtime.Object {
			return &corev1.PodTemplate{ObjectMeta: meta(name), Template: podTemplate()}
		},
		Invalid: func(name string) runtime.Object {
			tmpl := podTemplate()
			tmpl.Spec.Containers = nil
			return &corev1.PodTemplate{ObjectMeta: meta(name), Template: tmpl}
		},
		Change:                   func(obj runtime.Object) { obj.(*corev1.PodTemplate).Template.Spec.Containers[0].Image = "busybox:2" },
		AllowUnconditionalUpdate: true,
	}
}

func eventTester(rest.APIGroupInfo, *testing.T) registrytest.Tester {
	valid := func(name string, action string) runtime.Object {
		// A new event (eventTime set) may be about an object of another
		// namespace.
		return &corev1.Event{ObjectMeta: meta(name),
			InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "pod-1"},
			EventTime:           metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			ReportingController: "example.com/registrytest", ReportingInstance: "registrytest-1",
			Action: action, Reason: "Created", Type: corev1.EventTypeNormal}
	}
	return registrytest.Tester{
		Valid:                    func(name string) runtime.Object { return valid(name, "Create") },
		Invalid:                  func(name string) runtime.Object { return valid(name, "") },
		Change:                   func(obj runtime.Object) { obj.(*corev1.Event).Message = "changed" },
		AllowCreateOnUpdate:      true,
		AllowUnconditionalUpdate: true,
	}
}

func persistentVolumeClaimTester(info rest.APIGroupInfo, t *testing.T) registrytest.Tester {
	valid := func(name string, modes ...corev1.PersistentVolumeAccessMode) runtime.Object {
		return &corev1.PersistentVolumeClaim{ObjectMeta: meta(name), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: modes,
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
	}
	pvc := func(obj runtime.Object) *corev1.PersistentVolumeClaim { return obj.(*corev1.PersistentVolumeClaim) }
	return registrytest.Tester{
		Valid:   func(name string) runtime.Object { return valid(name, corev1.ReadWriteOnce) },
		Invalid: func(name string) runtime.Object { return valid(name) },
		// An unbound claim's spec never changes: the update cases
		// change a label.
		AllowUnconditionalUpdate: true,
		Status: &registrytest.StatusCheck{
			Storage:      registrytest.StatusStorage(t, info, "persistentvolumeclaims"),
			ChangeStatus: func(obj runtime.Object) { pvc(obj).Status.Phase = corev1.ClaimLost },
		},
	}
}
