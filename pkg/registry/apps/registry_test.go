package apps_test

import (
	"reflect"
	"testing"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// replicas is the spec.replicas of a deployment, replica set or stateful
// set.
func replicas(obj runtime.Object) *int32 {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").FieldByName("Replicas").Interface().(*int32)
}

// TestRegistry runs the registry's conformance suite on the workloads
// with a scale subresource, each made from a prototype with the test's
// selector and template.
func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resource  string
		prototype runtime.Object
	}{
		{"deployments", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: selector, Template: template()}}},
		{"replicasets", &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: selector, Template: template()}}},
		{"statefulsets", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template()}}},
	} {
		valid := func(name string, n int32) runtime.Object {
			obj := tc.prototype.DeepCopyObject()
			obj.(metav1.Object).SetName(name)
			reflect.ValueOf(obj).Elem().FieldByName("Spec").FieldByName("Replicas").Set(reflect.ValueOf(&n))
			return obj
		}
		t.Run(tc.resource, func(t *testing.T) {
			t.Parallel()
			info := registrytest.BuildGroup(t, apps.NewRESTStorageProvider())
			tr := registrytest.Tester{
				Storage:                  registrytest.Storage(t, info, tc.resource).(registrytest.ResourceStorage),
				Valid:                    func(name string) runtime.Object { return valid(name, 1) },
				Invalid:                  func(name string) runtime.Object { return valid(name, -1) },
				Change:                   func(obj runtime.Object) { *replicas(obj) = 3 },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:    registrytest.StatusStorage(t, info, tc.resource),
					ChangeSpec: func(obj runtime.Object) { *replicas(obj) = 4 },
					ChangeStatus: func(obj runtime.Object) {
						reflect.ValueOf(obj).Elem().FieldByName("Status").FieldByName("ObservedGeneration").SetInt(1)
					},
					Spec: func(obj runtime.Object) any { return *replicas(obj) },
				},
				Scale: &registrytest.ScaleCheck{
					Storage:  registrytest.Storage(t, info, tc.resource+"/scale").(scaler),
					Replicas: func(obj runtime.Object) int32 { return *replicas(obj) },
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
