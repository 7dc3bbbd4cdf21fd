package batch

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func testJob(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
}

// TestJobLifecycle drives a job as the job controller would, through the
// typed client: create, watch, status updates, the field selector on
// successes, and deletion with the pods' propagation.
func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	jobs := clientset(t).BatchV1().Jobs(ns)
	w, err := jobs.Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	job, err := jobs.Create(ctx(t), testJob("life"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := string(job.UID)
	if got := job.Spec.Selector.MatchLabels; len(got) != 1 || got[batchv1.ControllerUidLabel] != uid {
		t.Errorf("generated selector %v, want the job's UID", got)
	}
	if job.Labels[batchv1.JobNameLabel] != "life" || job.Spec.Template.Labels["controller-uid"] != uid || job.Generation != 1 {
		t.Errorf("labels %v, template labels %v, generation %d", job.Labels, job.Spec.Template.Labels, job.Generation)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*batchv1.Job).Name != "life" {
		t.Errorf("first event %s %v", ev.Type, ev.Object)
	}

	// The controller starts a pod, then counts its success.
	job.Status = batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), StartTime: ptr.To(metav1.Now()), UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}}
	if job, err = jobs.UpdateStatus(ctx(t), job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := *job.Status.StartTime
	job.Status.Active, job.Status.Ready, job.Status.Succeeded = 0, ptr.To[int32](0), 1
	job.Status.CompletionTime = ptr.To(metav1.NewTime(start.Add(2 * time.Second)))
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
	}
	if job, err = jobs.UpdateStatus(ctx(t), job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if job.Generation != 1 || job.Status.Succeeded != 1 {
		t.Errorf("generation %d, succeeded %d after status updates", job.Generation, job.Status.Succeeded)
	}
	for _, want := range []watch.EventType{watch.Modified, watch.Modified} {
		if ev := next(t, w); ev.Type != want {
			t.Errorf("event %s, want %s", ev.Type, want)
		}
	}
	// A finished job stays finished.
	job.Status.Conditions = nil
	_, err = jobs.UpdateStatus(ctx(t), job, metav1.UpdateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusUnprocessableEntity || !strings.Contains(s.Message, "cannot disable the terminal Complete=True condition") {
		t.Errorf("reopening a finished job: %d %s", s.Code, s.Message)
	}

	if _, err := jobs.Create(ctx(t), testJob("other"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for selector, want := range map[string][]string{"status.successful=1": {"life"}, "status.successful=0": {"other"}, "status.successful!=0": {"life"}} {
		list, err := jobs.List(ctx(t), metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range list.Items {
			names = append(names, j.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: %v, want %v", selector, names, want)
		}
	}

	if err := jobs.Delete(ctx(t), "life", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Get(ctx(t), "life", metav1.GetOptions{}); statusOf(t, err).Code != http.StatusNotFound {
		t.Errorf("deleted job: %v", err)
	}
}

// next returns the next event of w, failing the test after a while.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-ctx(t).Done():
		t.Fatal("no event")
	}
	return watch.Event{}
}

// warnings collects the Warning headers a client receives.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// TestJobDeleteOrphansByDefault: a batch/v1 job deleted without a
// propagation policy keeps its pods (the orphan finalizer) and warns.
func TestJobDeleteOrphansByDefault(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	cfg := rest.CopyConfig(srv.ClientConfig)
	w := &warnings{}
	cfg.WarningHandler = w
	jobs := kubernetes.NewForConfigOrDie(cfg).BatchV1().Jobs(ns)
	if _, err := jobs.Create(ctx(t), testJob("orphaning"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := jobs.Delete(ctx(t), "orphaning", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	job, err := jobs.Get(ctx(t), "orphaning", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.DeletionTimestamp == nil || !slices.Equal(job.Finalizers, []string{metav1.FinalizerOrphanDependents}) {
		t.Errorf("deletion %v, finalizers %v", job.DeletionTimestamp, job.Finalizers)
	}
	if len(w.list) != 1 || !strings.HasPrefix(w.list[0], "child pods are preserved by default when jobs are deleted") {
		t.Errorf("warnings %q", w.list)
	}
	// The garbage collector's part, by hand.
	job.Finalizers = nil
	if _, err := jobs.Update(ctx(t), job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestJobServerSideApply applies jobs as kubectl apply --server-side
// does: defaults and the generated selector are nobody's, a second
// manager conflicts on what the first owns, and only the spec moves the
// generation.
func TestJobServerSideApply(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	jobs := clientset(t).BatchV1().Jobs(ns)
	apply := func(manager string, parallelism int32, force bool) (*batchv1.Job, error) {
		cfg := batchv1ac.Job("applied", ns).WithSpec(batchv1ac.JobSpec().
			WithParallelism(parallelism).
			WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
				WithRestartPolicy(corev1.RestartPolicyNever).
				WithContainers(corev1ac.Container().WithName("c").WithImage("busybox")))))
		return jobs.Apply(ctx(t), cfg, metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	job, err := apply("ci", 2, false)
	if err != nil {
		t.Fatal(err)
	}
	// Parallelism alone: completions stay unset (the job ends at its first success).
	if job.Spec.Completions != nil || *job.Spec.Parallelism != 2 || job.Spec.Selector == nil || len(job.ManagedFields) != 1 ||
		job.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("applied job: completions %v parallelism %v selector %v managed fields %+v", job.Spec.Completions, *job.Spec.Parallelism, job.Spec.Selector, job.ManagedFields)
	}
	if job, err = apply("ci", 2, false); err != nil || job.Generation != 1 {
		t.Fatalf("re-applying the same: generation %d, %v", job.Generation, err)
	}
	_, err = apply("other", 3, false)
	if s := statusOf(t, err); s.Code != http.StatusConflict || !strings.Contains(s.Message, `conflict with "ci": .spec.parallelism`) {
		t.Errorf("another manager: %d %s", s.Code, s.Message)
	}
	if job, err = apply("other", 3, true); err != nil || *job.Spec.Parallelism != 3 || job.Generation != 2 {
		t.Fatalf("forced: %v", err)
	}
}
