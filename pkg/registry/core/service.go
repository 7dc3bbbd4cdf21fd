package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// newServices declares services. Their allocators al reserve each
// service's cluster IPs and node ports (service_rest.go);
// releaseAllocators frees the allocators' stores with the services'.
func newServices(al *serviceAllocators, releaseAllocators func()) generic.Resource {
	return generic.Resource{
		Name: "services", Singular: "service", Kind: "Service", Namespaced: true,
		ShortNames: []string{"svc"},
		Categories: []string{"all"},
		New:        generic.NewOf[corev1.Service],
		NewList:    generic.NewOf[corev1.ServiceList],
		Strategy:   serviceStrategy{WarningStrategy: generic.NewWarningStrategy(true, serviceWarnings)},
		// Only status changes on services/status.
		StatusStrategy: generic.StatusStrategy{Main: serviceStrategy{WarningStrategy: generic.NewWarningStrategy(true, serviceWarnings)}, GroupVersion: "v1",
			Validate: validateServiceStatusUpdate, Warnings: serviceStatusWarnings},
		Hooks:               al.hooks(),
		Destroy:             releaseAllocators,
		AttrFunc:            serviceAttrs,
		ReturnDeletedObject: true,
		Table:               serviceTable,
	}
}

// serviceAttrs: kube's services select on spec.clusterIP and spec.type.
var serviceAttrs = generic.AttrFuncOf("a service", true, func(svc *corev1.Service, set fields.Set) {
	set["spec.clusterIP"] = svc.Spec.ClusterIP
	set["spec.type"] = string(svc.Spec.Type)
})

// serviceStrategy: services may be created by PUT; their status is
// written through services/status only.
type serviceStrategy struct {
	generic.WarningStrategy[*corev1.Service]
	resetsStatus
}

func (serviceStrategy) AllowCreateOnUpdate() bool { return true }

// Default is kube's SetDefaults_Service.
func (serviceStrategy) Default(obj runtime.Object) {
	svc := obj.(*corev1.Service)
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			timeout := corev1.DefaultClientIPServiceAffinitySeconds
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		sp := &spec.Ports[i]
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
		}
		if sp.TargetPort == intstr.FromInt32(0) || sp.TargetPort == intstr.FromString("") {
			sp.TargetPort = intstr.FromInt32(sp.Port)
		}
	}
	if externallyAccessible(svc) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && (spec.Type == corev1.ServiceTypeClusterIP ||
		spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer) {
		cluster := corev1.ServiceInternalTrafficPolicyCluster
		spec.InternalTrafficPolicy = &cluster
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			allocate := true
			spec.AllocateLoadBalancerNodePorts = &allocate
		}
		vip := corev1.LoadBalancerIPModeVIP
		for i, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" && ing.IPMode == nil {
				svc.Status.LoadBalancer.Ingress[i].IPMode = &vip
			}
		}
	}
}

// externallyAccessible: reachable from outside the cluster.
func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func (serviceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.ResetStatus(obj)
	dropExternalNameInternalTrafficPolicy(obj.(*corev1.Service))
}

func (serviceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	generic.KeepStatus(obj, old)
	dropTypeDependentFields(svc, oldSvc)
	dropExternalNameInternalTrafficPolicy(svc)
}

// dropExternalNameInternalTrafficPolicy: kube once defaulted
// internalTrafficPolicy on ExternalName services and hides it when it
// reads them; not storing it shows the same.
func dropExternalNameInternalTrafficPolicy(svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		svc.Spec.InternalTrafficPolicy = nil
	}
}

// dropTypeDependentFields is kube's: a type change wipes the values the
// old type had and the new one does not use, when the server filled them
// in and the client did not change them.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if old.Spec.ClusterIP == svc.Spec.ClusterIP && slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if policyOf(old) == policyOf(svc) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(svc) && sets.New(collectNodePorts(old)...).IsSuperset(sets.New(collectNodePorts(svc)...)) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheck(old) && !needsHealthCheck(svc) && old.Spec.HealthCheckNodePort == svc.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if a, b := old.Spec.AllocateLoadBalancerNodePorts, svc.Spec.AllocateLoadBalancerNodePorts; a != nil && b != nil && *a == *b {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if equalStringPtrs(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && old.Spec.ExternalTrafficPolicy == svc.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
	// A load balancer's status goes with its type.
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

func policyOf(svc *corev1.Service) corev1.IPFamilyPolicy {
	if svc.Spec.IPFamilyPolicy == nil {
		return ""
	}
	return *svc.Spec.IPFamilyPolicy
}

func equalStringPtrs(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func (serviceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateServiceCreate(obj.(*corev1.Service))
}

func (serviceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateServiceUpdate(obj.(*corev1.Service), old.(*corev1.Service))
}

// serviceWarnings are kube's GetWarningsForService.
func serviceWarnings(svc *corev1.Service) []string {
	var warnings []string
	spec, specPath := &svc.Spec, field.NewPath("spec")
	if _, ok := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		warnings = append(warnings, fmt.Sprintf("annotation %s is deprecated, please use %s instead",
			corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode))
	}
	if spec.ClusterIP != "" && spec.ClusterIP != corev1.ClusterIPNone {
		for i, ip := range spec.ClusterIPs {
			warnings = append(warnings, validation.GetWarningsForIP(specPath.Child("clusterIPs").Index(i), ip)...)
		}
	}
	headless := spec.Type == corev1.ServiceTypeClusterIP && spec.ClusterIP == corev1.ClusterIPNone
	if headless {
		if spec.LoadBalancerIP != "" {
			warnings = append(warnings, "spec.loadBalancerIP is ignored for headless services")
		}
		if len(spec.ExternalIPs) > 0 {
			warnings = append(warnings, "spec.externalIPs is ignored for headless services")
		}
		if spec.SessionAffinity != corev1.ServiceAffinityNone {
			warnings = append(warnings, "spec.SessionAffinity is ignored for headless services")
		}
	}
	for i, ip := range spec.ExternalIPs {
		warnings = append(warnings, validation.GetWarningsForIP(specPath.Child("externalIPs").Index(i), ip)...)
	}
	if len(spec.ExternalIPs) > 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		warnings = append(warnings, "spec.externalIPs is deprecated and may no longer be implemented in some clusters")
	}
	if spec.LoadBalancerIP != "" {
		warnings = append(warnings, validation.GetWarningsForIP(specPath.Child("loadBalancerIP"), spec.LoadBalancerIP)...)
	}
	for i, cidr := range spec.LoadBalancerSourceRanges {
		warnings = append(warnings, validation.GetWarningsForCIDR(specPath.Child("loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if spec.Type == corev1.ServiceTypeExternalName && len(spec.ExternalIPs) > 0 {
		warnings = append(warnings, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if spec.Type != corev1.ServiceTypeExternalName && spec.ExternalName != "" {
		warnings = append(warnings, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	if td := spec.TrafficDistribution; td != nil && *td == corev1.ServiceTrafficDistributionPreferClose {
		warnings = append(warnings, fmt.Sprintf("spec.trafficDistribution: %q is deprecated; use %q",
			corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone))
	}
	return warnings
}

// validateServiceStatusUpdate checks the metadata and the load balancer's
// status.
func validateServiceStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&svc.ObjectMeta, &oldSvc.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateLoadBalancerStatus(&svc.Status.LoadBalancer, &svc.Spec, field.NewPath("status", "loadBalancer"))...)
}

// serviceStatusWarnings warns of load balancer IPs in a non-standard form.
func serviceStatusWarnings(_ context.Context, obj, _ runtime.Object) []string {
	var warnings []string
	for i, ing := range obj.(*corev1.Service).Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "loadBalancer", "ingress").Index(i), ing.IP)...)
		}
	}
	return warnings
}

// normalizeClusterIPs keeps clusterIP and clusterIPs in step for clients
// that set only the singular field (kube's, in its service REST).
func normalizeClusterIPs(svc, old *corev1.Service) {
	if old == nil {
		if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		return
	}
	// An old client cleared clusterIPs while patching something else.
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
	}
	if old.Spec.ClusterIP != svc.Spec.ClusterIP {
		same := slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs)
		switch {
		case old.Spec.ClusterIP != "" && svc.Spec.ClusterIP == "":
			if same {
				svc.Spec.ClusterIPs = nil
			}
		case same:
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
	}
}

// patchAllocatedValues lets a client resend the manifest it created the
// service from: allocated values it leaves out are kept.
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		used := sets.New(collectNodePorts(old)...).Intersection(sets.New(collectNodePorts(svc)...))
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && !used.Has(int(byName[p.Name])) {
				p.NodePort = byName[p.Name]
			}
		}
	}
	if needsHealthCheck(old) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

var serviceSpecDocs = corev1.ServiceSpec{}.SwaggerDoc()

var serviceTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Type", Type: "string", Description: serviceSpecDocs["type"]},
	{Name: "Cluster-IP", Type: "string", Description: serviceSpecDocs["clusterIP"]},
	{Name: "External-IP", Type: "string", Description: serviceSpecDocs["externalIPs"]},
	{Name: "Port(s)", Type: "string", Description: serviceSpecDocs["ports"]},
	generic.AgeColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: serviceSpecDocs["selector"]},
}, func(svc *corev1.Service) ([]interface{}, error) {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := servicePortsString(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []interface{}{svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), ports,
		generic.TranslateTimestampSince(svc.CreationTimestamp), labels.FormatLabels(svc.Spec.Selector)}, nil
})

// serviceExternalIP is kube's EXTERNAL-IP column (as the server prints it,
// wide: load balancer addresses are not shortened).
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := sets.New[string]()
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" {
				lb.Insert(ing.IP)
			} else if ing.Hostname != "" {
				lb.Insert(ing.Hostname)
			}
		}
		results := sets.List(lb)
		results = append(results, svc.Spec.ExternalIPs...)
		if len(results) > 0 {
			return strings.Join(results, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePortsString is kube's PORT(S): port[:nodePort]/protocol, ...
func servicePortsString(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}
