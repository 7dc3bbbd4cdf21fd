package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

var servicesResource = schema.GroupResource{Resource: "services"}

var serviceResources = []corev1.ResourceName{
	ObjectCountName(servicesResource),
	corev1.ResourceServices,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
}

type serviceEvaluator struct{ list ListFunc }

func (s *serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (s *serviceEvaluator) GroupResource() schema.GroupResource { return servicesResource }

// Handles creates and updates: a service's type, so its node ports and
// load balancer, can change.
func (s *serviceEvaluator) Handles(a admission.Attributes) bool {
	op := a.GetOperation()
	return a.GetSubresource() == "" && (op == admission.Create || op == admission.Update)
}

func (s *serviceEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return matches(q, item, s.MatchingResources, noScopes)
}

func (s *serviceEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, serviceResources)
}

func (s *serviceEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (s *serviceEvaluator) UncoveredQuotaScopes(_, _ []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

// Usage: one service; a NodePort service a node port per port; a
// LoadBalancer one load balancer and a node port per port, or, when it
// allocates none, per port that names one.
func (s *serviceEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	svc, ok := item.(*corev1.Service)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *api.Service or *v1.Service, got %T", item)
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	ports := int64(len(svc.Spec.Ports))
	result := corev1.ResourceList{
		ObjectCountName(servicesResource):    one,
		corev1.ResourceServices:              one,
		corev1.ResourceServicesLoadBalancers: {Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     {Format: resource.DecimalSI},
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		result[corev1.ResourceServicesLoadBalancers] = one
	}
	return result, nil
}

func (s *serviceEvaluator) UsageStats(opts quota.UsageStatsOptions) (quota.UsageStats, error) {
	return usageStats(opts, s.list, noScopes, s.Usage)
}
