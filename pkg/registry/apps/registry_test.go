package apps_test

import (
	"testing"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/apps"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

var selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}

type scaler interface {
	rest.Getter
	rest.Updater
}

// TestRegistry runs the registry's conformance suite on the workloads
// with a scale subresource.
func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resource string
		valid    func(name string, replicas int32) runtime.Object
		replicas func(obj runtime.Object) *int32
		setReady func(obj runtime.Object)
	}{
		{
			resource: "deployments",
			valid: func(name string, replicas int32) runtime.Object {
				return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: selector, Template: template()}}
			},
			replicas: func(obj runtime.Object) *int32 { return obj.(*appsv1.Deployment).Spec.Replicas },
			setReady: func(obj runtime.Object) { obj.(*appsv1.Deployment).Status.ObservedGeneration = 1 },
		},
		{
			resource: "replicasets",
			valid: func(name string, replicas int32) runtime.Object {
				return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: selector, Template: template()}}
			},
			replicas: func(obj runtime.Object) *int32 { return obj.(*appsv1.ReplicaSet).Spec.Replicas },
			setReady: func(obj runtime.Object) { obj.(*appsv1.ReplicaSet).Status.ObservedGeneration = 1 },
		},
		{
			resource: "statefulsets",
			valid: func(name string, replicas int32) runtime.Object {
				return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: selector, Template: template()}}
			},
			replicas: func(obj runtime.Object) *int32 { return obj.(*appsv1.StatefulSet).Spec.Replicas },
			setReady: func(obj runtime.Object) { obj.(*appsv1.StatefulSet).Status.ObservedGeneration = 1 },
		},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			t.Parallel()
			info := registrytest.BuildGroup(t, apps.NewRESTStorageProvider())
			tr := registrytest.Tester{
				Storage:                  registrytest.Storage(t, info, tc.resource).(registrytest.ResourceStorage),
				Valid:                    func(name string) runtime.Object { return tc.valid(name, 1) },
				Invalid:                  func(name string) runtime.Object { return tc.valid(name, -1) },
				Change:                   func(obj runtime.Object) { *tc.replicas(obj) = 3 },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:      registrytest.StatusStorage(t, info, tc.resource),
					ChangeSpec:   func(obj runtime.Object) { *tc.replicas(obj) = 4 },
					ChangeStatus: tc.setReady,
					Spec:         func(obj runtime.Object) any { return *tc.replicas(obj) },
				},
				Scale: &registrytest.ScaleCheck{
					Storage:  registrytest.Storage(t, info, tc.resource+"/scale").(scaler),
					Replicas: func(obj runtime.Object) int32 { return *tc.replicas(obj) },
				},
			}
			tr.Run(t)
		})
	}
}

// TestRegistryOthers runs the registry's conformance suite on the apps
// kinds without a scale subresource.
func TestRegistryOthers(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, apps.NewRESTStorageProvider(), []registrytest.Case{
		{Resource: "daemonsets", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string) *appsv1.DaemonSet {
				return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template()}}
			}
			image := func(obj runtime.Object) *string {
				return &obj.(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Image
			}
			return registrytest.Tester{
				Valid: func(name string) runtime.Object { return valid(name) },
				Invalid: func(name string) runtime.Object {
					ds := valid(name)
					ds.Spec.Template.Labels = map[string]string{"app": "y"}
					return ds
				},
				Change:                   func(obj runtime.Object) { *image(obj) = "busybox:2" },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:      registrytest.StatusStorage(t, info, "daemonsets"),
					ChangeSpec:   func(obj runtime.Object) { *image(obj) = "busybox:3" },
					ChangeStatus: func(obj runtime.Object) { obj.(*appsv1.DaemonSet).Status.ObservedGeneration = 1 },
				},
			}
		}},
		{Resource: "controllerrevisions", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, revision int64) runtime.Object {
				return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name},
					Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}, Revision: revision}
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, 1) },
				Invalid:                  func(name string) runtime.Object { return valid(name, -1) },
				Change:                   func(obj runtime.Object) { obj.(*appsv1.ControllerRevision).Revision = 2 },
				AllowUnconditionalUpdate: true,
			}
		}},
	})
}
