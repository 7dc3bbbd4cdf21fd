package batch

import (
	"context"
	"math"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestParseIndexes(t *testing.T) {
	for _, tc := range []struct {
		in      string
		total   int32
		wantErr string
	}{
		{"", 0, ""},
		{"0", 1, ""},
		{"0,2-4,7", 5, ""},
		{"1-1", 0, "non-increasing order, previous: 1, current: 1"},
		{"3,1", 0, "non-increasing order, previous: 3, current: 1"},
		{"0-2-3", 0, `the fragment "0-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`},
		{"a", 0, `cannot convert string to integer for index: "a"`},
		{"8", 0, `too large index: "8"`},
		{"2-9", 0, `too large index: "9"`},
	} {
		total, err := parseIndexes(tc.in, 8)
		if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) || total != tc.total {
			t.Errorf("%q: %d, %v; want %d, %q", tc.in, total, err, tc.total, tc.wantErr)
		}
	}
}

func TestIndexesOverlap(t *testing.T) {
	for _, tc := range []struct {
		completed, failed string
		index             int32
		overlap           bool
	}{
		{"0-2", "3-4", 0, false},
		{"0-2,5", "4-6", 5, true},
		{"1,x,3", "3", 3, true},
		{"", "1", 0, false},
	} {
		index, overlap := indexesOverlap(tc.completed, tc.failed, 10)
		if index != tc.index || overlap != tc.overlap {
			t.Errorf("%q / %q: %d %v, want %d %v", tc.completed, tc.failed, index, overlap, tc.index, tc.overlap)
		}
	}
}

func TestJobDefaults(t *testing.T) {
	perIndex := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), BackoffLimitPerIndex: ptr.To[int32](1),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "X"}}}}}}}
	jobStrategy{}.Default(perIndex)
	s := perIndex.Spec
	if s.Completions != nil || *s.BackoffLimit != math.MaxInt32 || *s.PodReplacementPolicy != batchv1.Failed ||
		s.PodFailurePolicy.Rules[0].OnPodConditions[0].Status != corev1.ConditionTrue || s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("defaults: %+v", s)
	}
}

// TestGenerateSelector: the user's labels stay (validation then refuses
// a conflict), the generated selector selects the UID only.
func TestGenerateSelector(t *testing.T) {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: types.UID("u1")}}
	j.Spec.Template.Labels = map[string]string{"job-name": "mine"}
	generateSelector(j)
	want := map[string]string{"job-name": "mine", batchv1.JobNameLabel: "j", "controller-uid": "u1", batchv1.ControllerUidLabel: "u1"}
	for k, v := range want {
		if j.Spec.Template.Labels[k] != v {
			t.Errorf("template label %s=%q, want %q", k, j.Spec.Template.Labels[k], v)
		}
	}
	if len(j.Spec.Selector.MatchLabels) != 1 || j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != "u1" {
		t.Errorf("selector %v", j.Spec.Selector)
	}
	errs := validateGeneratedSelector(j)
	if len(errs) != 1 || errs[0].Field != "spec.template.metadata.labels[job-name]" || errs[0].Detail != "must be 'j'" {
		t.Errorf("errors %v", errs)
	}
}

func TestJobStatusTransitions(t *testing.T) {
	start := metav1.Now()
	// More ready pods than active ones: a status kube no longer accepts,
	// left as it is by updates of other fields.
	old := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", ResourceVersion: "1"},
		Spec:   batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1)},
		Status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](2), StartTime: &start, Succeeded: 1, Failed: 2}}
	for _, tc := range []struct {
		name   string
		change func(*batchv1.Job)
		want   string // a message among the errors, "" for none
	}{
		{"counting on", func(j *batchv1.Job) { j.Status.Succeeded = 2 }, ""},
		{"fewer failures", func(j *batchv1.Job) { j.Status.Failed = 1 }, "cannot decrease the failed counter"},
		{"failed without a failure target", func(j *batchv1.Job) {
			j.Status.Active = 0
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
		}, "cannot set Failed=True condition without the FailureTarget=true condition"},
		{"an already broken status left alone", func(j *batchv1.Job) { j.Status.Failed = 3 }, ""},
		{"an already broken status touched", func(j *batchv1.Job) { j.Status.Ready = ptr.To[int32](3) }, "cannot set more ready pods than active"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := old.DeepCopy()
			tc.change(j)
			errs := validateJobStatusUpdate(j, old)
			if tc.want == "" && len(errs) > 0 || tc.want != "" && !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Errorf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	for schedule, want := range map[string]string{
		"*/5 * * * *": "",
		"@every 1h":   "",
		"TZ=0":        "invalid schedule format: runtime error: slice bounds out of range [:-1]",
		"* * *":       "expected exactly 5 fields, found 3: [* * *]",
	} {
		err := parseSchedule(schedule)
		if (err == nil) != (want == "") || err != nil && err.Error() != want {
			t.Errorf("%q: %v, want %q", schedule, err, want)
		}
	}
}

func TestJobDeleteWarning(t *testing.T) {
	background := metav1.DeletePropagationBackground
	if w := (jobStrategy{}).WarningsOnDelete(context.Background(), &metav1.DeleteOptions{}); len(w) != 1 {
		t.Errorf("no policy: %v", w)
	}
	if w := (jobStrategy{}).WarningsOnDelete(context.Background(), &metav1.DeleteOptions{PropagationPolicy: &background}); len(w) != 0 {
		t.Errorf("background: %v", w)
	}
}
