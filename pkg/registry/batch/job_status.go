package batch

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The validation of jobs/status. Since kube 1.35 (JobManagedBy, locked
// on) a status written by any controller must describe a consistent
// job: a finished job stays finished, counters do not go down, and so
// on. As in kube, most rules are checked only when the fields they read
// change, so that a status that was already inconsistent can still be
// written.

func validateJobStatusUpdate(j, old *batchv1.Job) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	allErrs = append(allErrs, validateJobStatus(j, newStatusChanges(j, old), statusPath)...)
	return append(allErrs, validateJobStatusTransition(j, old, statusPath)...)
}

// statusChanges says which parts of a job's status an update changes.
type statusChanges struct {
	finished, complete, failed, failureTarget, successCriteriaMet bool
	completedIndexes, failedIndexes, active, startTime            bool
	completionTime, uncounted, ready, terminating                 bool
	// suspendedWithZeroCompletions may finish without ever starting.
	suspendedWithZeroCompletions bool
	// resuming: JobSuspended goes from True to False.
	resuming bool
}

func newStatusChanges(j, old *batchv1.Job) statusChanges {
	s, o := &j.Status, &old.Status
	changed := func(t batchv1.JobConditionType) bool {
		return conditionTrue(s.Conditions, t) != conditionTrue(o.Conditions, t)
	}
	return statusChanges{
		finished:                     jobFinished(j) != jobFinished(old),
		complete:                     changed(batchv1.JobComplete),
		failed:                       changed(batchv1.JobFailed),
		failureTarget:                changed(batchv1.JobFailureTarget),
		successCriteriaMet:           changed(batchv1.JobSuccessCriteriaMet),
		completedIndexes:             s.CompletedIndexes != o.CompletedIndexes,
		failedIndexes:                !ptr.Equal(s.FailedIndexes, o.FailedIndexes),
		active:                       s.Active != o.Active,
		startTime:                    !ptr.Equal(s.StartTime, o.StartTime),
		completionTime:               !ptr.Equal(s.CompletionTime, o.CompletionTime),
		uncounted:                    !apiequality.Semantic.DeepEqual(s.UncountedTerminatedPods, o.UncountedTerminatedPods),
		ready:                        !ptr.Equal(s.Ready, o.Ready),
		terminating:                  !ptr.Equal(s.Terminating, o.Terminating),
		suspendedWithZeroCompletions: ptr.Deref(j.Spec.Suspend, false) && ptr.Equal(j.Spec.Completions, ptr.To[int32](0)),
		resuming:                     conditionTrue(o.Conditions, batchv1.JobSuspended) && conditionFalse(s.Conditions, batchv1.JobSuspended),
	}
}

// validateJobStatus validates the status of j, checking the rules whose
// fields ch says changed.
func validateJobStatus(j *batchv1.Job, ch statusChanges, p *field.Path) field.ErrorList {
	s := &j.Status
	allErrs := validateStatusCounters(s, p)
	complete, failed := conditionTrue(s.Conditions, batchv1.JobComplete), conditionTrue(s.Conditions, batchv1.JobFailed)
	failureTarget := conditionTrue(s.Conditions, batchv1.JobFailureTarget)
	successCriteriaMet := conditionTrue(s.Conditions, batchv1.JobSuccessCriteriaMet)
	finished := jobFinished(j)
	conditions := p.Child("conditions")
	invalid := func(ok bool, path *field.Path, value any, msg string) {
		if !ok {
			allErrs = append(allErrs, field.Invalid(path, value, msg))
		}
	}
	invalid(!(ch.complete || ch.failed) || !(complete && failed), conditions, field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions")
	invalid(!(ch.complete || ch.failureTarget) || !(complete && failureTarget), conditions, field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions")
	if ch.complete || ch.completionTime {
		invalid(s.CompletionTime == nil || complete, p.Child("completionTime"), s.CompletionTime, "cannot set completionTime when there is no Complete=True condition")
		if s.CompletionTime == nil && complete {
			allErrs = append(allErrs, field.Required(p.Child("completionTime"), "completionTime is required for Complete jobs"))
		}
	}
	if (ch.startTime || ch.completionTime) && s.StartTime != nil && s.CompletionTime != nil {
		invalid(!s.CompletionTime.Before(s.StartTime), p.Child("completionTime"), s.CompletionTime, "must be equal to or after `startTime`")
	}
	invalid(!(ch.failed || ch.failedIndexes) || !failed || failureTarget, conditions, field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition")
	invalid(!(ch.complete || ch.successCriteriaMet) || !complete || successCriteriaMet, conditions, field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition")
	invalid(!(ch.finished || ch.active) || !(s.Active > 0 && finished), p.Child("active"), s.Active, "active>0 is invalid for finished job")
	if (ch.finished || ch.startTime) && !ch.suspendedWithZeroCompletions && s.StartTime == nil && finished {
		allErrs = append(allErrs, field.Required(p.Child("startTime"), "startTime is required for finished job"))
	}
	if u := s.UncountedTerminatedPods; (ch.finished || ch.uncounted) && finished && u != nil && len(u.Failed)+len(u.Succeeded) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("uncountedTerminatedPods"), corevalidation.InternalValue(u), "must be empty for finished job"))
	}
	allErrs = append(allErrs, validateStatusIndexes(j, ch, p)...)
	if t := s.Terminating; (ch.finished || ch.terminating) && t != nil && *t > 0 && finished {
		allErrs = append(allErrs, field.Invalid(p.Child("terminating"), t, "terminating>0 is invalid for finished job"))
	}
	if r := s.Ready; (ch.ready || ch.active) && r != nil && *r > s.Active {
		allErrs = append(allErrs, field.Invalid(p.Child("ready"), *r, "cannot set more ready pods than active"))
	}
	invalid(!(successCriteriaMet && failed), conditions, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions")
	invalid(!(successCriteriaMet && failureTarget), conditions, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions")
	invalid(j.Spec.SuccessPolicy == nil || successCriteriaMet || !complete, conditions, field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True")
	return allErrs
}

// validateStatusCounters: no counter is negative; each uncounted pod UID
// is set and listed once.
func validateStatusCounters(s *batchv1.JobStatus, p *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateNonnegativeField(int64(s.Active), p.Child("active"))
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(s.Succeeded), p.Child("succeeded"))...)
	allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(s.Failed), p.Child("failed"))...)
	if s.Ready != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*s.Ready), p.Child("ready"))...)
	}
	if s.Terminating != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*s.Terminating), p.Child("terminating"))...)
	}
	if u := s.UncountedTerminatedPods; u != nil {
		seen := sets.New[types.UID]()
		for _, list := range []struct {
			name string
			uids []types.UID
		}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
			for i, uid := range list.uids {
				path := p.Child("uncountedTerminatedPods", list.name).Index(i)
				switch {
				case uid == "":
					allErrs = append(allErrs, field.Invalid(path, uid, "must not be empty"))
				case seen.Has(uid):
					allErrs = append(allErrs, field.Duplicate(path, uid))
				default:
					seen.Insert(uid)
				}
			}
		}
	}
	return allErrs
}

// validateStatusIndexes validates completedIndexes and failedIndexes when
// they change.
func validateStatusIndexes(j *batchv1.Job, ch statusChanges, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	s := &j.Status
	completions := j.Spec.Completions
	if ch.completedIndexes && completions != nil {
		if _, err := parseIndexes(s.CompletedIndexes, *completions); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "error parsing completedIndexes: "+err.Error()))
		}
	}
	if ch.failedIndexes && completions != nil && j.Spec.BackoffLimitPerIndex != nil && s.FailedIndexes != nil {
		if _, err := parseIndexes(*s.FailedIndexes, *completions); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("failedIndexes"), s.FailedIndexes, "error parsing failedIndexes: "+err.Error()))
		}
	}
	indexed := ptr.Deref(j.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	if ch.completedIndexes && len(s.CompletedIndexes) != 0 && !indexed {
		allErrs = append(allErrs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if ch.failedIndexes && j.Spec.BackoffLimitPerIndex == nil && s.FailedIndexes != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if (ch.failedIndexes || ch.completedIndexes) && completions != nil && s.FailedIndexes != nil {
		if index, overlap := indexesOverlap(s.CompletedIndexes, *s.FailedIndexes, *completions); overlap {
			allErrs = append(allErrs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, fmt.Sprintf("failedIndexes and completedIndexes overlap at index: %d", index)))
		}
	}
	return allErrs
}

// indexesOverlap finds the first index both lists hold; intervals that do
// not parse are skipped (their format is reported apart).
func indexesOverlap(completed, failed string, completions int32) (int32, bool) {
	if completed == "" || failed == "" {
		return 0, false
	}
	type interval struct{ x, y int32 }
	parse := func(s string) []interval {
		var out []interval
		for _, part := range strings.Split(s, ",") {
			if x, y, err := parseIndexInterval(part, completions); err == nil {
				out = append(out, interval{x, y})
			}
		}
		return out
	}
	c, f := parse(completed), parse(failed)
	for i, j := 0, 0; i < len(c) && j < len(f); {
		if c[i].x <= f[j].y && f[j].x <= c[i].y {
			return max(c[i].x, f[j].x), true
		}
		if c[i].x <= f[j].x {
			i++
		} else {
			j++
		}
	}
	return 0, false
}

// validateJobStatusTransition: what a status update may not undo.
func validateJobStatusTransition(j, old *batchv1.Job, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	s, o := &j.Status, &old.Status
	conditions := p.Child("conditions")
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if conditionTrue(o.Conditions, t) && !conditionTrue(s.Conditions, t) {
			allErrs = append(allErrs, field.Invalid(conditions, field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	if s.Failed < o.Failed {
		allErrs = append(allErrs, field.Invalid(p.Child("failed"), s.Failed, "cannot decrease the failed counter"))
	}
	// An indexed job scaled down (completions equal to parallelism) may
	// count fewer successes.
	indexed := ptr.Deref(j.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	if (!indexed || !ptr.Equal(j.Spec.Completions, j.Spec.Parallelism)) && s.Succeeded < o.Succeeded {
		allErrs = append(allErrs, field.Invalid(p.Child("succeeded"), s.Succeeded, "cannot decrease the succeeded counter"))
	}
	if s.CompletionTime != nil && o.CompletionTime != nil && !ptr.Equal(s.CompletionTime, o.CompletionTime) {
		allErrs = append(allErrs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "field is immutable"))
	}
	ch := newStatusChanges(j, old)
	if ch.startTime && !ch.resuming && o.StartTime != nil && !ptr.Deref(j.Spec.Suspend, false) {
		allErrs = append(allErrs, field.Invalid(p.Child("startTime"), s.StartTime, "field is immutable for unsuspended job once set"))
	}
	metBefore, met := conditionTrue(o.Conditions, batchv1.JobSuccessCriteriaMet), conditionTrue(s.Conditions, batchv1.JobSuccessCriteriaMet)
	if metBefore && !met {
		allErrs = append(allErrs, field.Invalid(conditions, field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if conditionTrue(o.Conditions, batchv1.JobComplete) && !metBefore && met {
		allErrs = append(allErrs, field.Invalid(conditions, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return allErrs
}

func jobFinished(j *batchv1.Job) bool {
	return conditionTrue(j.Status.Conditions, batchv1.JobComplete) || conditionTrue(j.Status.Conditions, batchv1.JobFailed)
}

func conditionTrue(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	return conditionIs(conditions, t, corev1.ConditionTrue)
}

func conditionFalse(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	return conditionIs(conditions, t, corev1.ConditionFalse)
}

// conditionIs reports whether any condition of type t has status s.
func conditionIs(conditions []batchv1.JobCondition, t batchv1.JobConditionType, s corev1.ConditionStatus) bool {
	for _, c := range conditions {
		if c.Type == t && c.Status == s {
			return true
		}
	}
	return false
}
