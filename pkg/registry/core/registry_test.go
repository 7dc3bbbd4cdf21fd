package core_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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
			Storage:      registrytest.Storage(t, info, "pods/status").(rest.Updater),
			ChangeSpec:   func(obj runtime.Object) { obj.(*corev1.Pod).Spec.Containers[0].Image = "busybox:3" },
			ChangeStatus: func(obj runtime.Object) { obj.(*corev1.Pod).Status.Message = "registrytest" },
			Spec:         func(obj runtime.Object) any { return obj.(*corev1.Pod).Spec },
			Status:       func(obj runtime.Object) any { return obj.(*corev1.Pod).Status },
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
			Storage:    registrytest.Storage(t, info, "services/status").(rest.Updater),
			ChangeSpec: func(obj runtime.Object) { obj.(*corev1.Service).Spec.Selector = map[string]string{"app": "changed"} },
			ChangeStatus: func(obj runtime.Object) {
				obj.(*corev1.Service).Status.Conditions = []metav1.Condition{{
					Type: "Ready", Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Unix(1, 0)}}
			},
			Spec:   func(obj runtime.Object) any { return obj.(*corev1.Service).Spec },
			Status: func(obj runtime.Object) any { return obj.(*corev1.Service).Status },
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
			Storage: registrytest.Storage(t, info, "namespaces/status").(rest.Updater),
			// A namespace's spec changes only through /finalize.
			ChangeStatus: func(obj runtime.Object) {
				obj.(*corev1.Namespace).Status.Conditions = []corev1.NamespaceCondition{{
					Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse, Reason: "Test"}}
			},
			Spec:   func(obj runtime.Object) any { return obj.(*corev1.Namespace).Spec },
			Status: func(obj runtime.Object) any { return obj.(*corev1.Namespace).Status },
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
			Storage:    registrytest.Storage(t, info, "nodes/status").(rest.Updater),
			ChangeSpec: func(obj runtime.Object) { obj.(*corev1.Node).Spec.Unschedulable = true },
			ChangeStatus: func(obj runtime.Object) {
				cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
				obj.(*corev1.Node).Status.Capacity, obj.(*corev1.Node).Status.Allocatable = cpu, cpu
			},
			Spec:   func(obj runtime.Object) any { return obj.(*corev1.Node).Spec },
			Status: func(obj runtime.Object) any { return obj.(*corev1.Node).Status },
		},
	}
}
