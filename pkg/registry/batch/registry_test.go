package batch_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/batch"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyOnFailure,
		Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
	}}
}

// TestRegistry runs the registry's conformance suite on jobs and cron
// jobs, with their status subresources.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, batch.NewRESTStorageProvider(), []registrytest.Case{
		{Resource: "jobs", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, parallelism int32) runtime.Object {
				return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism), Template: podTemplate()}}
			}
			parallelism := func(obj runtime.Object) *int32 { return obj.(*batchv1.Job).Spec.Parallelism }
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, 1) },
				Invalid:                  func(name string) runtime.Object { return valid(name, -1) },
				Change:                   func(obj runtime.Object) { *parallelism(obj) = 3 },
				AllowUnconditionalUpdate: true,
				// Deletes of batch/v1 jobs orphan their pods (kube's
				// default GC policy): the orphan finalizer stays until
				// the garbage collector removes it.
				Finish: registrytest.RemoveFinalizers(registrytest.Storage(t, info, "jobs")),
				Status: &registrytest.StatusCheck{
					Storage:      registrytest.StatusStorage(t, info, "jobs"),
					ChangeSpec:   func(obj runtime.Object) { *parallelism(obj) = 4 },
					ChangeStatus: func(obj runtime.Object) { obj.(*batchv1.Job).Status.Active = 1 },
				},
			}
		}},
		{Resource: "cronjobs", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, schedule string) runtime.Object {
				return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.CronJobSpec{
					Schedule:    schedule,
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate()}},
				}}
			}
			scheduled := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, "*/5 * * * *") },
				Invalid:                  func(name string) runtime.Object { return valid(name, "not a schedule") },
				Change:                   func(obj runtime.Object) { obj.(*batchv1.CronJob).Spec.Schedule = "*/7 * * * *" },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:      registrytest.StatusStorage(t, info, "cronjobs"),
					ChangeSpec:   func(obj runtime.Object) { obj.(*batchv1.CronJob).Spec.Schedule = "*/9 * * * *" },
					ChangeStatus: func(obj runtime.Object) { obj.(*batchv1.CronJob).Status.LastScheduleTime = &scheduled },
				},
			}
		}},
	})
}
