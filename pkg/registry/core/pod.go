package core

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// podLookups are the other resources that new pods need.
type podLookups struct {
	// limitRanges, when set, give new pods their default resources.
	limitRanges rest.Lister
	// serviceAccount, priority and runtimeClass, when set, are the
	// admission steps of new pods that --disable-admission-plugins turns
	// off (RESTStorageProvider).
	serviceAccount, priority, runtimeClass PodAdmitter
	tolerations                            *DefaultTolerationSeconds
	topology                               *PodTopologyLabels
	// budgets are what evictions honour.
	budgets DisruptionBudgets
}

// newPods declares the pods resource, with pods/status, pods/binding,
// pods/eviction, pods/ephemeralcontainers, pods/resize and the legacy
// bindings resource.
func newPods(lookups podLookups) generic.Resource {
	strategy := podStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}, tolerations: lookups.tolerations}
	return generic.Resource{
		Name: "pods", Singular: "pod", Kind: "Pod", Namespaced: true,
		ShortNames:           []string{"po"},
		Categories:           []string{"all"},
		New:                  generic.NewOf[corev1.Pod],
		NewList:              generic.NewOf[corev1.PodList],
		Strategy:             strategy,
		StatusStrategy:       podStatusStrategy{strategy},
		Hooks:                generic.Hooks{AdmitCreate: admitNewPod(lookups)},
		AttrFunc:             podAttrs,
		FieldLabelConversion: podFieldLabelConversion,
		// The watch cache indexes pods by node: every kubelet watches its own.
		IndexFields:         []string{"spec.nodeName"},
		Table:               podTable,
		ReturnDeletedObject: true,
		Subresources: map[string]generic.SubresourceFunc{
			"pods/binding": func(pods *generic.Store) (rest.Storage, error) {
				return &BindingREST{store: pods, topology: lookups.topology}, nil
			},
			"bindings": func(pods *generic.Store) (rest.Storage, error) {
				return &LegacyBindingREST{binding: &BindingREST{store: pods}}, nil
			},
			"pods/ephemeralcontainers": generic.UpdateSubresource(podEphemeralContainersStrategy{strategy}),
			"pods/resize":              generic.UpdateSubresource(podResizeStrategy{strategy}),
			"pods/eviction": func(pods *generic.Store) (rest.Storage, error) {
				return &EvictionREST{pods: pods, status: generic.NewStatusREST(pods, podStatusStrategy{strategy}), budgets: lookups.budgets}, nil
			},
		},
	}
}

// podAttrs returns a pod's labels and the fields kube lets field selectors
// name. status.podIPs is accepted but, as in kube, never has a value.
var podAttrs = generic.AttrFuncOf("a pod", true, func(pod *corev1.Pod, set fields.Set) {
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	set["status.podIP"] = podIP
	set["status.podIPs"] = ""
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
})

var podFieldLabels = generic.SupportedFieldLabels("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
	"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName")

// podFieldLabelConversion accepts the pod fields kube does, and spec.host,
// the old name of spec.nodeName that old clients still send.
func podFieldLabelConversion(label, value string) (string, string, error) {
	if label == "spec.host" {
		return "spec.nodeName", value, nil
	}
	return podFieldLabels(label, value)
}

type podStrategy struct {
	generic.BaseStrategy
	resetsStatus
	// tolerations are added back to updated pods (nil: the plugin is
	// off).
	tolerations *DefaultTolerationSeconds
}

var (
	_ rest.Defaulter                  = podStrategy{}
	_ rest.RESTGracefulDeleteStrategy = podStrategy{}
)

// Default implements rest.Defaulter.
func (podStrategy) Default(obj runtime.Object) { podspec.SetDefaultsPod(obj.(*corev1.Pod)) }

// PrepareForCreate starts a pod Pending with its QoS class, after the
// changes kube's admission plugins make to new pods.
func (s podStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	generic.StartGeneration(pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	podspec.ApplyAppArmorAnnotations(ctx, pod)
	if len(pod.Spec.SchedulingGates) > 0 {
		setPodCondition(&pod.Status, corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonSchedulingGated, Message: "Scheduling is blocked due to non-empty scheduling gates",
		})
	}
	pod.Status.QOSClass = podspec.QOSClass(&pod.Spec)
}

// PrepareForUpdate keeps the status, and what clients unaware of newer
// fields would drop; kube tracks pod generation: any spec change bumps it.
func (s podStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	generic.KeepStatus(pod, oldPod)
	if pod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
		pod.Spec.Resources = oldPod.Spec.Resources.DeepCopy()
	}
	// kube's admission plugins run on updates of pods too: tolerations of
	// node problems are added back; the priority set on create is kept.
	if s.tolerations != nil {
		s.tolerations.Add(&pod.Spec)
	}
	if pod.Spec.Priority == nil {
		pod.Spec.Priority = oldPod.Spec.Priority
	}
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = oldPod.Spec.PreemptionPolicy
	}
	generic.BumpGenerationOnSpecChange(pod, oldPod)
}

func (podStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return podspec.ValidatePodCreate(obj.(*corev1.Pod))
}

func (podStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return podspec.ValidatePodUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
}

// WarningsOnCreate warns about names that make odd hostnames and about
// dubious fields (pod_warnings.go). Updates get none, as in kube: pods
// are written mostly by controllers and kubelets, often.
func (podStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	pod := obj.(*corev1.Pod)
	var warnings []string
	if msgs := validation.IsDNS1123Label(pod.Name); len(msgs) != 0 {
		warnings = append(warnings, fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	return append(warnings, podspec.PodWarnings(pod)...)
}

// CheckGracefulDelete gives a pod the grace period of the request, else
// its own terminationGracePeriodSeconds; a pod no kubelet runs (not
// scheduled, or finished) goes at once.
func (podStrategy) CheckGracefulDelete(_ context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool {
	if options == nil {
		return false
	}
	pod := obj.(*corev1.Pod)
	period := int64(0)
	if options.GracePeriodSeconds != nil {
		period = *options.GracePeriodSeconds
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	options.GracePeriodSeconds = &period
	return true
}

// podStatusStrategy serves pods/status: the spec and owner references stay
// (old kubelets corrupt the latter), the QoS class is immutable.
type podStatusStrategy struct{ podStrategy }

// GetResetFields implements rest.ResetFieldsStrategy: /status changes none of spec, metadata.deletionTimestamp, metadata.ownerReferences.
func (podStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("v1", "spec", "metadata.deletionTimestamp", "metadata.ownerReferences")
}

func (podStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	pod.Spec = oldPod.Spec
	pod.OwnerReferences = oldPod.OwnerReferences
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = oldPod.Status.QOSClass
	}
	// Keep what clients unaware of resource claims would drop.
	if pod.Status.ResourceClaimStatuses == nil {
		pod.Status.ResourceClaimStatuses = oldPod.Status.ResourceClaimStatuses
	}
	if pod.Status.ExtendedResourceClaimStatus == nil {
		pod.Status.ExtendedResourceClaimStatus = oldPod.Status.ExtendedResourceClaimStatus
	}
	preserveObservedGeneration(pod, oldPod)
}

// preserveObservedGeneration keeps the observedGeneration of the status
// and its conditions when a client clears them.
func preserveObservedGeneration(pod, old *corev1.Pod) {
	if pod.Status.ObservedGeneration == 0 {
		pod.Status.ObservedGeneration = old.Status.ObservedGeneration
	}
	oldGenerations := map[corev1.PodConditionType][]int64{}
	for _, c := range old.Status.Conditions {
		oldGenerations[c.Type] = append(oldGenerations[c.Type], c.ObservedGeneration)
	}
	for i, c := range pod.Status.Conditions {
		g := int64(0)
		if gens := oldGenerations[c.Type]; len(gens) > 0 {
			g, oldGenerations[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			pod.Status.Conditions[i].ObservedGeneration = g
		}
	}
}

// WarningsOnUpdate flags pod and host IPs not in canonical form.
func (podStatusStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	pod := obj.(*corev1.Pod)
	var warnings []string
	for i, ip := range pod.Status.PodIPs {
		warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "podIPs").Index(i).Child("ip"), ip.IP)...)
	}
	for i, ip := range pod.Status.HostIPs {
		warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "hostIPs").Index(i).Child("ip"), ip.IP)...)
	}
	return warnings
}

func (podStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return podspec.ValidatePodStatusUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
}
