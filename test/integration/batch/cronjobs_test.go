package batch

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCronJobStatus writes a cronjob's status as the cronjob controller
// does: the spec stays, the generation too.
func TestCronJobStatus(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	cronJobs := clientset(t).BatchV1().CronJobs(ns)
	cj, err := cronJobs.Create(ctx(t), &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: ptr.To("Europe/Berlin"), JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || !ptr.Equal(cj.Spec.SuccessfulJobsHistoryLimit, ptr.To[int32](3)) ||
		!ptr.Equal(cj.Spec.FailedJobsHistoryLimit, ptr.To[int32](1)) || !ptr.Equal(cj.Spec.Suspend, ptr.To(false)) || cj.Spec.JobTemplate.Spec.Parallelism != nil {
		t.Errorf("defaults: %+v", cj.Spec)
	}
	scheduled := metav1.NewTime(time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC))
	cj.Status = batchv1.CronJobStatus{LastScheduleTime: &scheduled, Active: []corev1.ObjectReference{{Kind: "Job", Name: "nightly-1", Namespace: ns}}}
	cj.Spec.Schedule = "@hourly"
	if cj, err = cronJobs.UpdateStatus(ctx(t), cj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if cj.Spec.Schedule != "0 3 * * *" || cj.Generation != 1 || len(cj.Status.Active) != 1 || !cj.Status.LastScheduleTime.Equal(&scheduled) {
		t.Errorf("after /status: schedule %q generation %d status %+v", cj.Spec.Schedule, cj.Generation, cj.Status)
	}
	cj.Spec.TimeZone = ptr.To("Atlantis/Capital")
	_, err = cronJobs.Update(ctx(t), cj, metav1.UpdateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusUnprocessableEntity || len(s.Details.Causes) != 1 || s.Details.Causes[0].Field != "spec.timeZone" {
		t.Errorf("unknown time zone: %+v", s)
	}
}

// TestKubectl creates a cronjob and a job from it with kubectl, finds
// them by short name and category, and reads their wide tables.
func TestKubectl(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl tests")
	}
	ns := srv.CreateNamespace(t)
	kubectl := func(args ...string) string {
		t.Helper()
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(c, "kubectl", append([]string{"--kubeconfig", srv.Server.KubeconfigPath, "-n", ns}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
	kubectl("create", "job", "tick-manual", "--from=cronjob/tick")
	job, err := clientset(t).BatchV1().Jobs(ns).Get(ctx(t), "tick-manual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" || len(job.OwnerReferences) != 1 || job.OwnerReferences[0].Name != "tick" {
		t.Errorf("job from the cronjob: annotations %v owners %+v", job.Annotations, job.OwnerReferences)
	}
	for _, tc := range []struct {
		args []string
		want []string // each a line of the output, spaces squeezed, ages dropped
	}{
		{[]string{"get", "cj", "-o", "wide"}, []string{
			"NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE CONTAINERS IMAGES SELECTOR",
			"tick */5 * * * * <none> False 0 <none> tick busybox <none>",
		}},
		{[]string{"get", "jobs", "-o", "wide"}, []string{
			"NAME STATUS COMPLETIONS DURATION AGE CONTAINERS IMAGES SELECTOR",
			"tick-manual Running 0/1 tick busybox batch.kubernetes.io/controller-uid=" + string(job.UID),
		}},
		{[]string{"get", "all", "-o", "name"}, []string{"cronjob.batch/tick", "job.batch/tick-manual"}},
	} {
		out := kubectl(tc.args...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var fields []string
			for _, f := range strings.Fields(line) {
				if !isAge(f) {
					fields = append(fields, f)
				}
			}
			got = append(got, strings.Join(fields, " "))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("kubectl %s:\n%s\nwant:\n%s", strings.Join(tc.args, " "), strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// isAge reports whether f is an age kubectl prints ("3s", "2m5s").
func isAge(f string) bool {
	if f == "" || f[len(f)-1] < 'a' {
		return false
	}
	_, err := time.ParseDuration(f)
	return err == nil
}
