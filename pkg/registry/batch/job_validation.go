package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The validation of jobs follows kube's pkg/apis/batch/validation: the
// same checks in the same order, with its field paths and messages.

// kube's limits on indexed jobs and on the policies of a job.
const (
	maxParallelismForIndexedJob             = 100_000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxManagedByLength                      = 63
)

func validateJobCreate(j *batchv1.Job) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&j.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateGeneratedSelector(j)...)
	allErrs = append(allErrs, validateJobSpecAndSelector(&j.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateNameAllowsCompletions(j)...)
}

func validateJobUpdate(j, old *batchv1.Job) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateJobSpecUpdate(&j.Spec, old, field.NewPath("spec"))...)
	return append(allErrs, validateNameAllowsCompletions(j)...)
}

// validateGeneratedSelector checks, for a job whose selector the server
// generates, that the template carries the generated labels and that the
// selector picks them.
func validateGeneratedSelector(j *batchv1.Job) field.ErrorList {
	if ptr.Deref(j.Spec.ManualSelector, false) || j.Spec.Selector == nil {
		return nil
	}
	var allErrs field.ErrorList
	if j.UID == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	meta := field.NewPath("spec", "template", "metadata")
	uid, name := string(j.UID), j.Name
	allErrs = append(allErrs, validateHasLabel(j.Spec.Template.Labels, meta, legacyControllerUIDLabel, uid)...)
	allErrs = append(allErrs, validateHasLabel(j.Spec.Template.Labels, meta, legacyJobNameLabel, name)...)
	allErrs = append(allErrs, validateHasLabel(j.Spec.Template.Labels, meta, controllerUIDLabel, uid)...)
	allErrs = append(allErrs, validateHasLabel(j.Spec.Template.Labels, meta, jobNameLabel, name)...)
	expected := labels.Set{controllerUIDLabel: uid, jobNameLabel: name, legacyControllerUIDLabel: uid, legacyJobNameLabel: name}
	if s, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !s.Matches(expected) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return allErrs
}

func validateHasLabel(l map[string]string, fldPath *field.Path, key, want string) field.ErrorList {
	got, found := l[key]
	switch {
	case !found:
		return field.ErrorList{field.Required(fldPath.Child("labels").Key(key), fmt.Sprintf("must be '%s'", want))}
	case got != want:
		return field.ErrorList{field.Invalid(fldPath.Child("labels").Key(key), l, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

// validateNameAllowsCompletions: an indexed job's last pod hostname
// (name-index) must be a DNS label.
func validateNameAllowsCompletions(j *batchv1.Job) field.ErrorList {
	completions := ptr.Deref(j.Spec.Completions, 0)
	if ptr.Deref(j.Spec.CompletionMode, "") != batchv1.IndexedCompletion || completions <= 0 {
		return nil
	}
	hostname := fmt.Sprintf("%s-%d", j.Name, completions-1)
	if len(validation.IsDNS1123Label(hostname)) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), j.Name, "will not able to create pod with invalid DNS label: "+hostname)}
	}
	return nil
}

// validateJobSpecAndSelector validates a job's spec with its selector,
// which must select the template's labels.
func validateJobSpecAndSelector(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateJobSpec(spec, fldPath)
	if spec.Selector == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	if s, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !s.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return allErrs
}

// validateJobSpec validates a job's spec or a CronJob's job template's.
func validateJobSpec(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct {
		name  string
		value *int32
	}{
		{"parallelism", spec.Parallelism}, {"completions", spec.Completions},
	} {
		if f.value != nil {
			allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*f.value), fldPath.Child(f.name))...)
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(*d, fldPath.Child("activeDeadlineSeconds"))...)
	}
	for _, f := range []struct {
		name  string
		value *int32
	}{
		{"backoffLimit", spec.BackoffLimit}, {"ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished},
		{"backoffLimitPerIndex", spec.BackoffLimitPerIndex},
	} {
		if f.value != nil {
			allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*f.value), fldPath.Child(f.name))...)
		}
	}
	if m := spec.MaxFailedIndexes; m != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*m), fldPath.Child("maxFailedIndexes"))...)
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if m := spec.ManagedBy; m != nil {
		allErrs = append(allErrs, validation.IsDomainPrefixedPath(fldPath.Child("managedBy"), *m)...)
		if len(*m) > maxManagedByLength {
			allErrs = append(allErrs, field.TooLong(fldPath.Child("managedBy"), "", maxManagedByLength))
		}
	}
	allErrs = append(allErrs, validateCompletionMode(spec, fldPath)...)
	if spec.PodFailurePolicy != nil {
		allErrs = append(allErrs, validatePodFailurePolicy(spec, fldPath.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("successPolicy"), corevalidation.InternalValue(*spec.SuccessPolicy), "requires indexed completion mode"))
		} else {
			allErrs = append(allErrs, validateSuccessPolicy(spec, fldPath.Child("successPolicy"))...)
		}
	}
	allErrs = append(allErrs, validatePodReplacementPolicy(spec, fldPath.Child("podReplacementPolicy"))...)
	allErrs = append(allErrs, podspec.ValidatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	return append(allErrs, validateJobRestartPolicy(spec, fldPath.Child("template", "spec", "restartPolicy"))...)
}

// validateJobRestartPolicy: a job's pods end; Always (the pod default) is
// refused as if unset.
func validateJobRestartPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	switch policy := spec.Template.Spec.RestartPolicy; {
	case policy == corev1.RestartPolicyAlways || policy == "":
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever))}
	case policy != corev1.RestartPolicyOnFailure && policy != corev1.RestartPolicyNever:
		return field.ErrorList{field.NotSupported(fldPath, policy, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	case spec.PodFailurePolicy != nil && policy != corev1.RestartPolicyNever:
		return field.ErrorList{field.Invalid(fldPath, policy, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever))}
	}
	return nil
}

// validateCompletionMode validates the completion mode and what indexed
// and non-indexed jobs each allow.
func validateCompletionMode(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mode := ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion)
	switch mode {
	case batchv1.NonIndexedCompletion:
		if spec.BackoffLimitPerIndex != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	case batchv1.IndexedCompletion:
		allErrs = append(allErrs, validateIndexedJob(spec, fldPath)...)
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("completionMode"), spec.CompletionMode,
			[]batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	return allErrs
}

func validateIndexedJob(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Completions == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("completions"), "when completion mode is Indexed"))
	}
	if p := spec.Parallelism; p != nil && *p > maxParallelismForIndexedJob {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("parallelism"), *p, fmt.Sprintf("must be less than or equal to %d when completion mode is Indexed", maxParallelismForIndexedJob)))
	}
	maxFailed := spec.MaxFailedIndexes
	if maxFailed != nil && spec.Completions != nil && *maxFailed > *spec.Completions {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *maxFailed, "must be less than or equal to completions"))
	}
	if maxFailed != nil && *maxFailed > maxFailedIndexesForIndexedJob {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *maxFailed, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if ptr.Deref(spec.Completions, 0) <= completionsSoftLimit || spec.BackoffLimitPerIndex == nil {
		return allErrs
	}
	const highCompletions = "when completions are above %d and used with backoff limit per index"
	if maxFailed == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
	}
	if p := spec.Parallelism; p != nil && *p > parallelismLimitForHighCompletions {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("parallelism"), *p,
			fmt.Sprintf("must be less than or equal to %d "+highCompletions, parallelismLimitForHighCompletions, completionsSoftLimit)))
	}
	if maxFailed != nil && *maxFailed > maxFailedIndexesLimitForHighCompletions {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("maxFailedIndexes"), *maxFailed,
			fmt.Sprintf("must be less than or equal to %d "+highCompletions, maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
	}
	return allErrs
}

func validatePodReplacementPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	policy := spec.PodReplacementPolicy
	switch {
	case policy == nil:
		return nil
	case spec.PodFailurePolicy != nil:
		if *policy != batchv1.Failed {
			return field.ErrorList{field.NotSupported(fldPath, *policy, []batchv1.PodReplacementPolicy{batchv1.Failed})}
		}
	case *policy != batchv1.Failed && *policy != batchv1.TerminatingOrFailed:
		return field.ErrorList{field.NotSupported(fldPath, *policy, []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed})}
	}
	return nil
}

// validateJobSpecUpdate validates the new spec, and what may not change:
// the selector, completions (but for indexed jobs scaled with
// parallelism), the template (but for suspended jobs) and the policies.
func validateJobSpecUpdate(spec *batchv1.JobSpec, old *batchv1.Job, fldPath *field.Path) field.ErrorList {
	oldSpec := &old.Spec
	allErrs := validateJobSpecAndSelector(spec, fldPath)
	allErrs = append(allErrs, validateCompletionsUpdate(spec, oldSpec, fldPath.Child("completions"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.Selector, oldSpec.Selector, fldPath.Child("selector"))...)
	allErrs = append(allErrs, validatePodTemplateUpdate(spec, old, fldPath)...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.CompletionMode, oldSpec.CompletionMode, fldPath.Child("completionMode"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.PodFailurePolicy, oldSpec.PodFailurePolicy, fldPath.Child("podFailurePolicy"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.BackoffLimitPerIndex, oldSpec.BackoffLimitPerIndex, fldPath.Child("backoffLimitPerIndex"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.ManagedBy, oldSpec.ManagedBy, fldPath.Child("managedBy"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(spec.SuccessPolicy, oldSpec.SuccessPolicy, fldPath.Child("successPolicy"))...)
}

// validateCompletionsUpdate: completions are immutable, but an indexed
// job may change them together with parallelism.
func validateCompletionsUpdate(spec, oldSpec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if ptr.Deref(spec.CompletionMode, "") != batchv1.IndexedCompletion {
		return apivalidation.ValidateImmutableField(spec.Completions, oldSpec.Completions, fldPath)
	}
	if apiequality.Semantic.DeepEqual(spec.Completions, oldSpec.Completions) || spec.Completions == nil {
		return nil
	}
	if *spec.Completions != ptr.Deref(spec.Parallelism, 0) {
		return field.ErrorList{field.Invalid(fldPath, spec.Completions, "can only be modified in tandem with spec.parallelism")}
	}
	return nil
}

// validatePodTemplateUpdate: a running job's template is immutable. A
// suspended job that never started (or was suspended since) and has no
// active pods may change its scheduling directives, its template's
// metadata and its containers' resources (kube 1.37's defaults of
// MutableSchedulingDirectivesForSuspendedJobs and
// MutablePodResourcesForSuspendedJobs).
func validatePodTemplateUpdate(spec *batchv1.JobSpec, old *batchv1.Job, fldPath *field.Path) field.ErrorList {
	template, oldTemplate := &spec.Template, &old.Spec.Template
	if !ptr.Deref(old.Spec.Suspend, false) || !mayMutateTemplate(old) {
		return immutable(template, oldTemplate, internalTemplate(template), fldPath.Child("template"))
	}
	oldSpec := oldTemplate.Spec.DeepCopy()
	switch {
	case template.Spec.Affinity == nil && oldSpec.Affinity != nil:
		oldSpec.Affinity.NodeAffinity = nil
		if *oldSpec.Affinity == (corev1.Affinity{}) {
			oldSpec.Affinity = nil
		}
	case template.Spec.Affinity != nil && oldSpec.Affinity == nil:
		oldSpec.Affinity = &corev1.Affinity{NodeAffinity: template.Spec.Affinity.NodeAffinity}
	case template.Spec.Affinity != nil:
		oldSpec.Affinity.NodeAffinity = template.Spec.Affinity.NodeAffinity
	}
	oldSpec.NodeSelector = template.Spec.NodeSelector
	oldSpec.Tolerations = template.Spec.Tolerations
	oldSpec.SchedulingGates = template.Spec.SchedulingGates
	// Only the containers' resources may differ from here.
	keepResources(oldSpec.Containers, template.Spec.Containers)
	keepResources(oldSpec.InitContainers, template.Spec.InitContainers)
	return immutable(&template.Spec, oldSpec, corevalidation.InternalValue(template.Spec), fldPath.Child("template.spec"))
}

// mayMutateTemplate: the job is suspended, has no active pods, and never
// started or was suspended since.
func mayMutateTemplate(j *batchv1.Job) bool {
	notStarted := j.Status.StartTime == nil
	suspendedSince := conditionTrue(j.Status.Conditions, batchv1.JobSuspended)
	return ptr.Deref(j.Spec.Suspend, false) && (notStarted || suspendedSince) && j.Status.Active == 0
}

// keepResources copies the resources of containers into old's, where the
// containers are the same ones.
func keepResources(old, containers []corev1.Container) {
	if len(old) != len(containers) {
		return
	}
	for i := range containers {
		if old[i].Name == containers[i].Name {
			old[i].Resources = containers[i].Resources
		}
	}
}

// immutable is apivalidation.ValidateImmutableField for values kube
// shows in its internal form.
func immutable(value, old, shown any, fldPath *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(value, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, shown, apivalidation.FieldImmutableErrorMsg)}
}

// internalTemplate is a pod template as kube shows it in messages: its
// internal type embeds the metadata (JSON names) beside a Spec without
// JSON names.
func internalTemplate(t *corev1.PodTemplateSpec) any {
	return struct {
		metav1.ObjectMeta
		Spec any
	}{t.ObjectMeta, corevalidation.InternalValue(t.Spec)}
}
