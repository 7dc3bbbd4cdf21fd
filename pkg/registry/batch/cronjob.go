package batch

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	// Time zones are checked against the IANA database built in, as
	// kube-apiserver does, not the host's.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
)

var cronJobs = workload.Declare(workload.Kind[*batchv1.CronJob, *batchv1.CronJobList]{
	ShortName: "cj",
	Strategy:  cronJobStrategy{workload.NewStrategy("batch/v1", rest.DeleteDependents)},
	// Status validates nothing else, as in kube.
	Table: workload.Table[*batchv1.CronJob]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
			{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
			{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
			{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
			{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		},
		Cells: func(cj *batchv1.CronJob) []interface{} {
			lastSchedule := "<none>"
			if t := cj.Status.LastScheduleTime; t != nil {
				lastSchedule = generic.TranslateTimestampSince(*t)
			}
			suspend := "<unset>"
			if s := cj.Spec.Suspend; s != nil {
				suspend = map[bool]string{true: "True", false: "False"}[*s]
			}
			return []interface{}{cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, "<none>"), suspend, int64(len(cj.Status.Active)), lastSchedule}
		},
		Template:    func(cj *batchv1.CronJob) *corev1.PodTemplateSpec { return &cj.Spec.JobTemplate.Spec.Template },
		SelectorDoc: batchv1.JobSpec{}.SwaggerDoc()["selector"],
		Selector:    func(cj *batchv1.CronJob) string { return metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector) },
	},
})

// cronJobStrategy: deleting a batch/v1 cron job deletes its jobs in the
// background (kube orphans them only through batch/v1beta1, not served).
type cronJobStrategy struct{ workload.Strategy }

// Default implements rest.Defaulter with kube's defaults: concurrent runs
// allowed, not suspended, 3 successful and 1 failed jobs kept. The job
// template gets its pod template's defaults, not a job's.
func (cronJobStrategy) Default(obj runtime.Object) {
	spec := &obj.(*batchv1.CronJob).Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	setPodFailurePolicyDefaults(spec.JobTemplate.Spec.PodFailurePolicy)
	podspec.SetDefaultsPodSpec(&spec.JobTemplate.Spec.Template.Spec)
}

func (s cronJobStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.Strategy.PrepareForCreate(ctx, obj)
	dropDisabledJobFields(&obj.(*batchv1.CronJob).Spec.JobTemplate.Spec, nil)
}

// PrepareForUpdate drops the disabled fields before the generation is
// counted: dropping them is no change of the spec.
func (s cronJobStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	dropDisabledJobFields(&obj.(*batchv1.CronJob).Spec.JobTemplate.Spec, &old.(*batchv1.CronJob).Spec.JobTemplate.Spec)
	s.Strategy.PrepareForUpdate(ctx, obj, old)
}

// maxCronJobNameLength leaves room for the 11 characters ("-" and a
// timestamp) the controller appends to name a job.
const maxCronJobNameLength = validation.DNS1035LabelMaxLength - 11

func (cronJobStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	cj := obj.(*batchv1.CronJob)
	allErrs := append(workload.ValidateMeta(obj), validateCronJobSpec(&cj.Spec, nil, field.NewPath("spec"))...)
	if len(cj.Name) > maxCronJobNameLength {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
	}
	return allErrs
}

// ValidateUpdate does not limit the name's length: older cronjobs with
// longer names can still be changed.
func (cronJobStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	spec, oldSpec := &obj.(*batchv1.CronJob).Spec, &old.(*batchv1.CronJob).Spec
	return append(workload.ValidateMetaUpdate(obj, old), validateCronJobSpec(spec, oldSpec, field.NewPath("spec"))...)
}

func (cronJobStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	cj := obj.(*batchv1.CronJob)
	return append(workload.NameWarnings(cj.Name), jobSpecWarnings(field.NewPath("spec", "jobTemplate", "spec"), &cj.Spec.JobTemplate.Spec)...)
}

// WarningsOnUpdate warns of a changed job template, and of a schedule
// still naming its time zone (allowed for cronjobs that had one).
func (cronJobStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	cj := obj.(*batchv1.CronJob)
	var warnings []string
	if cj.Generation != old.(*batchv1.CronJob).Generation {
		warnings = jobSpecWarnings(field.NewPath("spec", "jobTemplate", "spec"), &cj.Spec.JobTemplate.Spec)
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		// kube's path has "spec" twice.
		warnings = append(warnings, "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
	}
	return warnings
}

// validateCronJobSpec validates a cronjob's spec; old is nil on create.
func validateCronJobSpec(spec, old *batchv1.CronJobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Schedule == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("schedule"), ""))
	} else {
		// A schedule that had a time zone may keep it.
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		allErrs = append(allErrs, validateSchedule(spec.Schedule, allowTZ, spec.TimeZone, fldPath.Child("schedule"))...)
	}
	if d := spec.StartingDeadlineSeconds; d != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(*d, fldPath.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !ptr.Equal(old.TimeZone, spec.TimeZone) {
		allErrs = append(allErrs, validateTimeZone(spec.TimeZone, fldPath.Child("timeZone"))...)
	}
	allErrs = append(allErrs, validateConcurrencyPolicy(spec.ConcurrencyPolicy, fldPath.Child("concurrencyPolicy"))...)
	allErrs = append(allErrs, validateJobTemplate(&spec.JobTemplate, fldPath.Child("jobTemplate"))...)
	for _, f := range []struct {
		name  string
		value *int32
	}{
		{"successfulJobsHistoryLimit", spec.SuccessfulJobsHistoryLimit}, {"failedJobsHistoryLimit", spec.FailedJobsHistoryLimit},
	} {
		if f.value != nil {
			allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*f.value), fldPath.Child(f.name))...)
		}
	}
	return allErrs
}

func validateConcurrencyPolicy(policy batchv1.ConcurrencyPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy,
		[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent})}
}

// validateSchedule parses a schedule as the cronjob controller does
// (standard cron, with kube's messages); a time zone belongs in timeZone.
func validateSchedule(schedule string, allowTZ bool, timeZone *string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if err := parseSchedule(schedule); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, err.Error()))
	}
	switch hasTZ := strings.Contains(schedule, "TZ"); {
	case allowTZ && hasTZ && timeZone != nil:
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return allErrs
}

// parseSchedule parses a standard cron schedule; the parser panics on
// some malformed ones ("TZ=0"), which are errors too.
func parseSchedule(schedule string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	_, err = cron.ParseStandard(schedule)
	return err
}

// timeZoneComponent is what a component of an IANA time zone name may
// hold; digits and "+" for legacy names.
var timeZoneComponent = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func validateTimeZone(timeZone *string, fldPath *field.Path) field.ErrorList {
	if timeZone == nil {
		return nil
	}
	tz := *timeZone
	if tz == "" {
		return field.ErrorList{field.Invalid(fldPath, timeZone, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZoneComponent.MatchString(part) {
			return field.ErrorList{field.Invalid(fldPath, timeZone, "unknown time zone "+tz)}
		}
	}
	var allErrs field.ErrorList
	if strings.EqualFold(tz, "Local") {
		allErrs = append(allErrs, field.Invalid(fldPath, timeZone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(tz); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, timeZone, err.Error()))
	}
	return allErrs
}

// validateJobTemplate validates the job a cronjob creates, whose selector
// the server generates.
func validateJobTemplate(t *batchv1.JobTemplateSpec, fldPath *field.Path) field.ErrorList {
	specPath := fldPath.Child("spec")
	allErrs := validateJobSpec(&t.Spec, specPath)
	if t.Spec.Selector != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("selector"), t.Spec.Selector, "`selector` will be auto-generated"))
	}
	if ptr.Deref(t.Spec.ManualSelector, false) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("manualSelector"), t.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return allErrs
}
