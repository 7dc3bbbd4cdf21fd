package batch

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
)

var jobs = workload.Declare(workload.Kind[*batchv1.Job, *batchv1.JobList]{
	Strategy:             jobStrategy{workload.NewStrategy("batch/v1", rest.OrphanDependents)},
	Status:               generic.StatusStrategy{Validate: validateJobStatusWrite},
	AttrFunc:             jobAttrs,
	FieldLabelConversion: jobFieldLabelConversion,
	Table: workload.Table[*batchv1.Job]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Status", Type: "string", Description: "Status of the job."},
			{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
			{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		},
		Cells: func(j *batchv1.Job) []interface{} {
			return []interface{}{jobStatusCell(j), jobCompletionsCell(j), jobDurationCell(j)}
		},
		Template:    func(j *batchv1.Job) *corev1.PodTemplateSpec { return &j.Spec.Template },
		SelectorDoc: batchv1.JobSpec{}.SwaggerDoc()["selector"],
		Selector:    func(j *batchv1.Job) string { return metav1.FormatLabelSelector(j.Spec.Selector) },
	},
})

// jobCompletionsCell is "succeeded/completions", or "succeeded/1 of
// parallelism" for a job that completes with its first success.
func jobCompletionsCell(j *batchv1.Job) string {
	if j.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	}
	if p := ptr.Deref(j.Spec.Parallelism, 0); p > 1 {
		return fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, p)
	}
	return fmt.Sprintf("%d/1", j.Status.Succeeded)
}

// jobDurationCell is how long the job ran (runs), empty before it starts.
func jobDurationCell(j *batchv1.Job) string {
	switch {
	case j.Status.StartTime == nil:
		return ""
	case j.Status.CompletionTime == nil:
		return duration.HumanDuration(time.Since(j.Status.StartTime.Time))
	}
	return duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
}

// jobStatusCell is the job's state as kubectl shows it: the first true
// condition of kube's list, or Terminating, or Running.
func jobStatusCell(j *batchv1.Job) string {
	conditions := j.Status.Conditions
	switch {
	case firstConditionTrue(conditions, batchv1.JobComplete):
		return "Complete"
	case firstConditionTrue(conditions, batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case firstConditionTrue(conditions, batchv1.JobSuspended):
		return "Suspended"
	case firstConditionTrue(conditions, batchv1.JobFailureTarget):
		return "FailureTarget"
	case firstConditionTrue(conditions, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// firstConditionTrue: kube's printer reads the first condition of a type.
func firstConditionTrue(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// jobAttrs adds status.successful, the one job field kube selects on.
var jobAttrs = generic.AttrFuncOf("a job", true, func(j *batchv1.Job, set fields.Set) {
	set["status.successful"] = strconv.Itoa(int(j.Status.Succeeded))
})

// jobFieldLabelConversion accepts the fields kube selects jobs on, with
// its message for others.
func jobFieldLabelConversion(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace", "status.successful":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label %q not supported for Job", label)
}

// jobStrategy: deleting a batch/v1 job orphans its pods unless the
// client asks otherwise (kubectl does), kept by kube for old clients.
type jobStrategy struct{ workload.Strategy }

var _ rest.DeleteWarningsStrategy = jobStrategy{}

// WarningsOnDelete warns a client that names no propagation policy that
// the job's pods stay.
func (jobStrategy) WarningsOnDelete(_ context.Context, options *metav1.DeleteOptions) []string {
	//nolint:staticcheck // OrphanDependents is still honoured, as kube does.
	if options.PropagationPolicy != nil || options.OrphanDependents != nil {
		return nil
	}
	return []string{"child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"}
}

// Default implements rest.Defaulter with kube's defaults of batch/v1 jobs.
func (jobStrategy) Default(obj runtime.Object) {
	j := obj.(*batchv1.Job)
	setJobSpecDefaults(&j.Spec)
	// kube shares the map: the labels the selector generation adds to the
	// template (PrepareForCreate) become the job's labels too.
	if j.Spec.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = j.Spec.Template.Labels
	}
	podspec.SetDefaultsPodSpec(&j.Spec.Template.Spec)
}

// setJobSpecDefaults sets the defaults of a job's spec (not of a
// CronJob's job template, which kube leaves unset).
func setJobSpecDefaults(spec *batchv1.JobSpec) {
	// One pod to one completion when neither is said.
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			spec.BackoffLimit = ptr.To[int32](6)
		}
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr.To(false)
	}
	setPodFailurePolicyDefaults(spec.PodFailurePolicy)
}

// setPodFailurePolicyDefaults: a pod condition pattern matches a true
// condition unless it says otherwise. Job templates get it too.
func setPodFailurePolicyDefaults(p *batchv1.PodFailurePolicy) {
	if p == nil {
		return
	}
	for i := range p.Rules {
		for j := range p.Rules[i].OnPodConditions {
			if c := &p.Rules[i].OnPodConditions[j]; c.Status == "" {
				c.Status = corev1.ConditionTrue
			}
		}
	}
}

// PrepareForCreate starts a job without status, with the generated
// selector and pod labels unless the selector is manual.
func (s jobStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	j := obj.(*batchv1.Job)
	if !ptr.Deref(j.Spec.ManualSelector, false) {
		generateSelector(j)
	}
	// kube defaults the labels on every read; stored, they read the same.
	if len(j.Labels) == 0 {
		j.Labels = maps.Clone(j.Spec.Template.Labels)
	}
	s.Strategy.PrepareForCreate(ctx, j)
	dropDisabledJobFields(&j.Spec, nil)
}

// PrepareForUpdate keeps the status; spec changes bump the generation
// (dropping disabled fields is none).
func (s jobStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	dropDisabledJobFields(&obj.(*batchv1.Job).Spec, &old.(*batchv1.Job).Spec)
	s.Strategy.PrepareForUpdate(ctx, obj, old)
}

// dropDisabledJobFields drops spec.scheduling: kube 1.37 serves it behind
// the WorkloadWithJob gate, off by default, unless the old spec has it.
func dropDisabledJobFields(spec, old *batchv1.JobSpec) {
	if old == nil || old.Scheduling == nil {
		spec.Scheduling = nil
	}
}

// The labels of a job's pods that the generated selector relies on, and
// their legacy unprefixed forms, which kube still sets.
const (
	jobNameLabel             = batchv1.JobNameLabel
	controllerUIDLabel       = batchv1.ControllerUidLabel
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// generateSelector selects the job's pods by its UID, and labels its
// template with its name and UID, leaving labels the user set (a
// conflict fails validation).
func generateSelector(j *batchv1.Job) {
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	for key, value := range map[string]string{
		legacyJobNameLabel: j.Name, jobNameLabel: j.Name,
		legacyControllerUIDLabel: string(j.UID), controllerUIDLabel: string(j.UID),
	} {
		if _, set := j.Spec.Template.Labels[key]; !set {
			j.Spec.Template.Labels[key] = value
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, set := j.Spec.Selector.MatchLabels[controllerUIDLabel]; !set {
		j.Spec.Selector.MatchLabels[controllerUIDLabel] = string(j.UID)
	}
}

func (jobStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateJobCreate(obj.(*batchv1.Job))
}

func (jobStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateJobUpdate(obj.(*batchv1.Job), old.(*batchv1.Job))
}

// WarningsOnCreate warns of names that make odd pod hostnames, and of
// what the spec risks.
func (jobStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	j := obj.(*batchv1.Job)
	return append(workload.NameWarnings(j.Name), jobSpecWarnings(field.NewPath("spec"), &j.Spec)...)
}

// WarningsOnUpdate warns of the spec when it changed.
func (jobStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	j := obj.(*batchv1.Job)
	if j.Generation == old.(*batchv1.Job).Generation {
		return nil
	}
	return jobSpecWarnings(field.NewPath("spec"), &j.Spec)
}

// jobSpecWarnings: indexed jobs past kube's soft limits, and the pod
// template's warnings.
func jobSpecWarnings(p *field.Path, spec *batchv1.JobSpec) []string {
	var warnings []string
	if ptr.Deref(spec.CompletionMode, "") == batchv1.IndexedCompletion &&
		ptr.Deref(spec.Completions, 0) > completionsSoftLimit && ptr.Deref(spec.Parallelism, 0) > parallelismLimitForHighCompletions {
		warnings = append(warnings, fmt.Sprintf("%s: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail", p))
	}
	return append(warnings, podspec.PodTemplateWarnings(p.Child("template"), &spec.Template)...)
}

// validateJobStatusWrite validates a write of jobs/status.
func validateJobStatusWrite(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateJobStatusUpdate(obj.(*batchv1.Job), old.(*batchv1.Job))
}
