package quota

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
)

var podsResource = schema.GroupResource{Resource: "pods"}

var podObjectCountName = ObjectCountName(podsResource)

// podResources are the quota resources a pod uses, besides those by
// prefix (hugepages) and extended resources (requests.<name>).
var podResources = []corev1.ResourceName{
	podObjectCountName,
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
}

var podResourcePrefixes = []string{corev1.ResourceHugePagesPrefix, corev1.ResourceRequestsHugePagesPrefix}

var requestsDeviceClassPrefix = corev1.DefaultResourceRequestsPrefix + resourcev1.ResourceDeviceClassPrefix

// constrainedResources: a quota on one of these requires every container
// to state it. kube keeps this for compatibility, and never for more.
var constrainedResources = sets.New(
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
)

type podEvaluator struct {
	list ListFunc
	// now is the clock that says whether a deleted pod's grace period is
	// over (nil: time.Now).
	now func() time.Time
}

func (p *podEvaluator) GroupResource() schema.GroupResource { return podsResource }

// Constraints: each container must request the cpu and memory a quota
// limits, unless the pod sets pod-level resources.
func (p *podEvaluator) Constraints(required []corev1.ResourceName, item runtime.Object) error {
	pod, err := toPod(item)
	if err != nil {
		return err
	}
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	requiredSet := sets.New(required...).Intersection(constrainedResources)
	missing := map[corev1.ResourceName]sets.Set[string]{}
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range containers {
			c := &containers[i]
			have := sets.KeySet(podComputeUsage(c.Resources.Requests, c.Resources.Limits))
			for _, name := range sets.List(requiredSet.Difference(have)) {
				if missing[name] == nil {
					missing[name] = sets.New[string]()
				}
				missing[name].Insert(c.Name)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, name := range sets.List(sets.KeySet(missing)) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", name, strings.Join(sets.List(missing[name]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// Handles: creates; updates that move a pod in or out of the Terminating
// scope; resizes.
func (p *podEvaluator) Handles(a admission.Attributes) bool {
	switch a.GetSubresource() {
	case "":
		if a.GetOperation() == admission.Update {
			pod, err1 := toPod(a.GetObject())
			old, err2 := toPod(a.GetOldObject())
			if err1 != nil || err2 != nil {
				return false
			}
			return isTerminating(old) != isTerminating(pod)
		}
		return a.GetOperation() == admission.Create
	case "resize":
		return a.GetOperation() == admission.Update
	}
	return false
}

func (p *podEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return matches(q, item, p.MatchingResources, podInScope)
}

func (p *podEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	result := quota.Intersection(input, podResources)
	for _, name := range input {
		if quota.ContainsPrefix(podResourcePrefixes, name) || isExtendedQuotaName(name) {
			result = append(result, name)
		}
	}
	return result
}

func (p *podEvaluator) MatchingScopes(item runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return matchingScopes(item, selectors, podInScope)
}

func (p *podEvaluator) UncoveredQuotaScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return uncoveredScopes(limited, matched), nil
}

// Usage: a pod always counts in count/pods; its compute resources and
// "pods" only while it lives (not terminal, not past its grace period).
func (p *podEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	pod, err := toPod(item)
	if err != nil {
		return corev1.ResourceList{}, err
	}
	result := corev1.ResourceList{podObjectCountName: *resource.NewQuantity(1, resource.DecimalSI)}
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	if !chargedPod(pod, now()) {
		return result, nil
	}
	// As kube 1.37 with InPlacePodVerticalScaling and PodLevelResources
	// on: the larger of spec and status resources, pod-level ones first.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	usage := podComputeUsage(resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))
	return quota.Add(result, usage), nil
}

func (p *podEvaluator) UsageStats(opts quota.UsageStatsOptions) (quota.UsageStats, error) {
	return usageStats(opts, p.list, podInScope, p.Usage)
}

// podComputeUsage is what requests and limits cost: cpu and memory
// under their bare, requests. and limits. names, ephemeral storage,
// hugepages, and extended resources as requests.<name>.
func podComputeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	for _, r := range []struct{ name, req, lim corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.name]; ok {
			result[r.name] = q
			result[r.req] = q
		}
		if q, ok := limits[r.name]; ok {
			result[r.lim] = q
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			result[name] = q
			result[corev1.DefaultResourceRequestsPrefix+name] = q
		}
		if isDRAExtendedResourceName(name) {
			result[corev1.DefaultResourceRequestsPrefix+name] = q
		}
	}
	return result
}

// isNativeResource: in kubernetes.io/, or unqualified.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResourceName is kube's helper of that name: not native, and
// valid as requests.<name>.
func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func isDRAExtendedResourceName(name corev1.ResourceName) bool {
	return isExtendedResourceName(name) || strings.HasPrefix(string(name), resourcev1.ResourceDeviceClassPrefix)
}

// isExtendedQuotaName: requests.<extended resource>, the only form a
// quota on an extended resource takes.
func isExtendedQuotaName(name corev1.ResourceName) bool {
	nonNative := !isNativeResource(name) || strings.HasPrefix(string(name), requestsDeviceClassPrefix)
	return nonNative && strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
}

func toPod(obj runtime.Object) (*corev1.Pod, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expect *api.Pod or *v1.Pod, got %T", obj)
	}
	return pod, nil
}

// podInScope says whether a pod falls in one scope of a quota.
func podInScope(s corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, err := toPod(obj)
	if err != nil {
		return false, err
	}
	switch s.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return isBestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !isBestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		if s.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		var m labels.Set
		if pod.Spec.PriorityClassName != "" {
			m = labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}
		}
		return selectorMatches(s, m)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespaceAffinity(pod), nil
	}
	return false, nil
}

// isBestEffort: the pod's QoS class as its status states it, or as it
// would be computed.
func isBestEffort(pod *corev1.Pod) bool {
	qos := pod.Status.QOSClass
	if qos == "" {
		qos = podspec.QOSClass(&pod.Spec)
	}
	return qos == corev1.PodQOSBestEffort
}

func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// chargedPod: a pod costs compute resources until it ends (Succeeded,
// Failed) or its deletion's grace period is over (a lost node must not
// keep its pods' quota).
func chargedPod(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

func usesCrossNamespaceAffinity(pod *corev1.Pod) bool {
	if pod.Spec.Affinity == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a := pod.Spec.Affinity.PodAffinity; a != nil {
		terms = append(terms, a.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a := pod.Spec.Affinity.PodAntiAffinity; a != nil {
		terms = append(terms, a.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if len(t.Namespaces) != 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

// scopeSelectorAsLabels is kube's ScopedResourceSelectorRequirementsAsSelector.
func scopeSelectorAsLabels(s corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch s.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("%q is not a valid scope selector operator", s.Operator)
	}
	r, err := labels.NewRequirement(string(s.ScopeName), op, s.Values)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}
