package quota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

var claimsResource = schema.GroupResource{Resource: "persistentvolumeclaims"}

var claimObjectCountName = ObjectCountName(claimsResource)

var claimResources = []corev1.ResourceName{corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage}

// storageClassSuffix joins a class and a resource in the quota names of
// a storage class, <class>.storageclass.storage.k8s.io/<resource>.
const storageClassSuffix = ".storageclass.storage.k8s.io/"

type claimEvaluator struct{ list ListFunc }

func (c *claimEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (c *claimEvaluator) GroupResource() schema.GroupResource { return claimsResource }

// Handles creates and updates (a resize), and status writes that change
// what the claim holds (its allocated size, its attributes class).
func (c *claimEvaluator) Handles(a admission.Attributes) bool {
	op := a.GetOperation()
	switch a.GetSubresource() {
	case "":
		return op == admission.Create || op == admission.Update
	case "status":
		claim, err1 := toClaim(a.GetObject())
		old, err2 := toClaim(a.GetOldObject())
		if err1 != nil || err2 != nil {
			return false
		}
		return requiresReplenish(claim, old)
	}
	return false
}

// requiresReplenish: the allocated size or the attributes classes moved.
func requiresReplenish(claim, old *corev1.PersistentVolumeClaim) bool {
	// kube compares the pointers Storage() returns, always new ones: any
	// status write of a claim is evaluated.
	if old.Status.AllocatedResources.Storage() != claim.Status.AllocatedResources.Storage() {
		return true
	}
	return !attributesClasses(old).Equal(attributesClasses(claim))
}

func (c *claimEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return matches(q, item, c.MatchingResources, claimInScope)
}

func (c *claimEvaluator) MatchingResources(items []corev1.ResourceName) []corev1.ResourceName {
	result := []corev1.ResourceName{}
	for _, item := range items {
		if item == claimObjectCountName || quota.Contains(claimResources, item) {
			result = append(result, item)
			continue
		}
		for _, r := range claimResources {
			if strings.HasSuffix(string(item), storageClassSuffix+string(r)) {
				result = append(result, item)
				break
			}
		}
	}
	return result
}

func (c *claimEvaluator) MatchingScopes(item runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return matchingScopes(item, selectors, claimInScope)
}

func (c *claimEvaluator) UncoveredQuotaScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return uncoveredScopes(limited, matched), nil
}

// Usage: one claim (and one of its class), and the storage it requests,
// rounded up to a whole byte, or what is allocated when that is more (a
// failed expansion still holds it).
func (c *claimEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	claim, err := toClaim(item)
	if err != nil {
		return corev1.ResourceList{}, err
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	result := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one, claimObjectCountName: one}
	class := claimClass(claim)
	if class != "" {
		result[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one
	}
	if storage := claimStorage(claim); storage != nil {
		result[corev1.ResourceRequestsStorage] = *storage
		if class != "" {
			result[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = *storage
		}
	}
	return result, nil
}

// claimClass is the claim's storage class, the beta annotation first
// (component-helpers' GetPersistentVolumeClaimClass, whose package would
// bring client-go's scheme of every API version into the binary).
func claimClass(claim *corev1.PersistentVolumeClaim) string {
	if class, ok := claim.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if claim.Spec.StorageClassName != nil {
		return *claim.Spec.StorageClassName
	}
	return ""
}

func claimStorage(claim *corev1.PersistentVolumeClaim) *resource.Quantity {
	roundUp := func(q resource.Quantity) *resource.Quantity {
		rounded := q.DeepCopy()
		rounded.RoundUp(0)
		return &rounded
	}
	req, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil
	}
	result := roundUp(req)
	if allocated, ok := claim.Status.AllocatedResources[corev1.ResourceStorage]; ok && allocated.Cmp(*result) > 0 {
		result = roundUp(allocated)
	}
	return result
}

func (c *claimEvaluator) UsageStats(opts quota.UsageStatsOptions) (quota.UsageStats, error) {
	return usageStats(opts, c.list, claimInScope, c.Usage)
}

func toClaim(obj runtime.Object) (*corev1.PersistentVolumeClaim, error) {
	claim, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("expect *api.PersistentVolumeClaim or *v1.PersistentVolumeClaim, got %T", obj)
	}
	return claim, nil
}

// claimInScope: the VolumeAttributesClass scope, the only one of claims.
func claimInScope(s corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	claim, err := toClaim(obj)
	if err != nil || s.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, err
	}
	names := attributesClasses(claim)
	if s.Operator == corev1.ScopeSelectorOpExists {
		return len(names) != 0, nil
	}
	if len(names) == 0 {
		return selectorMatches(s, labels.Set{})
	}
	for name := range names {
		if ok, err := selectorMatches(s, labels.Set{string(corev1.ResourceQuotaScopeVolumeAttributesClass): name}); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// attributesClasses are the VolumeAttributesClasses a claim refers to:
// wanted, current, and the target of a modification under way.
func attributesClasses(claim *corev1.PersistentVolumeClaim) sets.Set[string] {
	names := sets.New[string]()
	if n := claim.Spec.VolumeAttributesClassName; n != nil && *n != "" {
		names.Insert(*n)
	}
	if n := claim.Status.CurrentVolumeAttributesClassName; n != nil && *n != "" {
		names.Insert(*n)
	}
	if m := claim.Status.ModifyVolumeStatus; m != nil && m.TargetVolumeAttributesClassName != "" {
		names.Insert(m.TargetVolumeAttributesClassName)
	}
	return names
}
