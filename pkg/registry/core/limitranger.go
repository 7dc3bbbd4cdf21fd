package core

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// kube-apiserver's LimitRanger admission plugin, in two halves: the
// defaults it gives the containers of a new pod (applied by the pods'
// AdmitCreate hook, where kube's mutating admission runs), and the minimums,
// maximums and ratios it enforces on pods and claims (ValidatePodLimits
// and ValidateClaimLimits, which the validating admission of
// pkg/apiserver runs).

// limitRangerAnnotation records on a pod the defaults it was given.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// ListLimitRanges returns the LimitRanges of ctx's namespace, by name, as
// the watch cache holds them (kube's LimitRanger reads its informer's; a
// LimitRange created through this server counts at once, see the cacher's
// reads at resourceVersion "0").
func ListLimitRanges(ctx context.Context, limitRanges rest.Lister) ([]*corev1.LimitRange, error) {
	list, err := limitRanges.List(ctx, &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.LimitRange, 0, len(list.Items))
	for _, item := range list.Items {
		lr := &corev1.LimitRange{}
		if err := item.Decode(lr); err != nil {
			return nil, err
		}
		out = append(out, lr)
	}
	return out, nil
}

// applyLimitRangeDefaults gives the containers of a new pod the default
// requests and limits of each LimitRange they lack, and notes on the pod
// what was set.
func applyLimitRangeDefaults(pod *corev1.Pod, ranges []*corev1.LimitRange) {
	for _, lr := range ranges {
		requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
		for _, item := range lr.Spec.Limits {
			if item.Type == corev1.LimitTypeContainer {
				fillMissing(requests, item.DefaultRequest)
				fillMissing(limits, item.Default)
			}
		}
		var notes []string
		for i := range pod.Spec.Containers {
			notes = defaultContainerResources(&pod.Spec.Containers[i], requests, limits, "container", notes)
		}
		for i := range pod.Spec.InitContainers {
			notes = defaultContainerResources(&pod.Spec.InitContainers[i], requests, limits, "init container", notes)
		}
		if len(notes) > 0 {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
		}
	}
}

func defaultContainerResources(c *corev1.Container, requests, limits corev1.ResourceList, what string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	setRequests, setLimits := fillMissingNames(c.Resources.Requests, requests), fillMissingNames(c.Resources.Limits, limits)
	if len(setRequests) > 0 {
		notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), what, c.Name))
	}
	if len(setLimits) > 0 {
		notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), what, c.Name))
	}
	return notes
}

// fillMissingNames copies into dst what it lacks of src and returns the
// names it copied, sorted.
func fillMissingNames(dst, src corev1.ResourceList) []string {
	var names []string
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v.DeepCopy()
			names = append(names, string(k))
		}
	}
	sort.Strings(names)
	return names
}

// ValidatePodLimits checks a new pod against the container and pod limits
// of a LimitRange, with kube's messages.
func ValidatePodLimits(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for _, c := range containers {
					errs = append(errs, checkLimitItem(item, c.Resources.Requests, c.Resources.Limits)...)
				}
			}
		case corev1.LimitTypePod:
			errs = append(errs, checkLimitItem(item, podRequests(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }, podLevelRequests(pod)),
				podRequests(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits }, podLevelLimits(pod)))...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// ValidateClaimLimits checks the storage a claim requests against the
// claim limits of a LimitRange.
func ValidateClaimLimits(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		kind := string(item.Type)
		for _, name := range sortedNames(item.Min) {
			errs = append(errs, minConstraint(kind, name, item.Min[corev1.ResourceName(name)], pvc.Spec.Resources.Requests, nil))
		}
		for _, name := range sortedNames(item.Max) {
			errs = append(errs, maxRequestConstraint(kind, name, item.Max[corev1.ResourceName(name)], pvc.Spec.Resources.Requests))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// checkLimitItem checks requests and limits against the min, max and
// ratio of one item (kube goes through each map in its random order;
// here names go in order).
func checkLimitItem(item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	kind := string(item.Type)
	var errs []error
	for _, name := range sortedNames(item.Min) {
		errs = append(errs, minConstraint(kind, name, item.Min[corev1.ResourceName(name)], requests, limits))
	}
	for _, name := range sortedNames(item.Max) {
		errs = append(errs, maxConstraint(kind, name, item.Max[corev1.ResourceName(name)], requests, limits))
	}
	for _, name := range sortedNames(item.MaxLimitRequestRatio) {
		errs = append(errs, limitRequestRatioConstraint(kind, name, item.MaxLimitRequestRatio[corev1.ResourceName(name)], requests, limits))
	}
	return errs
}

func sortedNames(list corev1.ResourceList) []string {
	names := make([]string, 0, len(list))
	for k := range list {
		names = append(names, string(k))
	}
	sort.Strings(names)
	return names
}

// atCommonPrecision returns request, limit and enforced at a common precision:
// milli-units when none overflows.
func atCommonPrecision(request, limit, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := request.Value(), limit.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return request.MilliValue(), limit.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(kind, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := atCommonPrecision(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, kind, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, kind, enforced.String(), lim.String())
	}
	return nil
}

// maxRequestConstraint is the max of claims, which have no limits.
func maxRequestConstraint(kind, name string, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	r, _, e := atCommonPrecision(req, resource.Quantity{}, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, kind, enforced.String())
	case r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	}
	return nil
}

func maxConstraint(kind, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := atCommonPrecision(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, kind, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, kind, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	}
	return nil
}

func limitRequestRatioConstraint(kind, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, _ := atCommonPrecision(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, kind, enforced.String())
	}
	ratio := float64(l) / float64(r)
	shown, observed, allowed := ratio, ratio, float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed, allowed = ratio*1000, float64(enforced.MilliValue())
	}
	if observed > allowed {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, enforced.String(), shown)
	}
	return nil
}

// podRequests sums what the containers of a pod ask (their requests or
// limits, by of): the regular containers and sidecars add up, the other
// init containers count by their largest; quantities the pod itself sets
// (pod-level resources) win.
func podRequests(pod *corev1.Pod, of func(*corev1.Container) corev1.ResourceList, podLevel corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addResources(total, of(&pod.Spec.Containers[i]))
	}
	sidecars, inits := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		own := corev1.ResourceList{}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(total, of(c))
			addResources(sidecars, of(c))
			own = sidecars
		} else {
			addResources(own, of(c))
			addResources(own, sidecars)
		}
		maxResources(inits, own)
	}
	maxResources(total, inits)
	for name, q := range podLevel {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
			total[name] = q.DeepCopy()
		}
	}
	return total
}

func podLevelRequests(pod *corev1.Pod) corev1.ResourceList {
	if pod.Spec.Resources == nil {
		return nil
	}
	return pod.Spec.Resources.Requests
}

func podLevelLimits(pod *corev1.Pod) corev1.ResourceList {
	if pod.Spec.Resources == nil {
		return nil
	}
	return pod.Spec.Resources.Limits
}

func addResources(list, add corev1.ResourceList) {
	for name, q := range add {
		if v, ok := list[name]; ok {
			v.Add(q)
			list[name] = v
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

func maxResources(list, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
