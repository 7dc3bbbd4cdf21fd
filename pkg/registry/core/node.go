package core

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var nodes = generic.Resource{
	Name: "nodes", Singular: "node", Kind: "Node",
	ShortNames: []string{"no"},
	New:        generic.NewOf[corev1.Node],
	NewList:    generic.NewOf[corev1.NodeList],
	Strategy:   nodeStrategy{WarningStrategy: generic.NewWarningStrategy(false, nodeWarnings)},
	// Only status changes on nodes/status.
	StatusStrategy: generic.StatusStrategy{Main: nodeStrategy{WarningStrategy: generic.NewWarningStrategy(false, nodeWarnings)}, GroupVersion: "v1", Prepare: dropNodeConfig,
		Validate: validateNodeStatusUpdate},
	AttrFunc: nodeAttrs,
	Table:    nodeTable,
}

// nodeAttrs: kube's nodes select on spec.unschedulable, and (cluster
// scoped, with their own field label conversion) not on namespace.
var nodeAttrs = generic.AttrFuncOf("a node", false, func(n *corev1.Node, set fields.Set) {
	set["spec.unschedulable"] = fmt.Sprint(n.Spec.Unschedulable)
})

// nodeStrategy: a node keeps the status it is created with (the kubelet
// registers with one); updates of the main resource keep the status.
type nodeStrategy struct {
	generic.WarningStrategy[*corev1.Node]
	resetsStatus
}

// Default is kube's node defaulting: allocatable defaults to capacity,
// quantities round up to milli precision, and podCIDR and podCIDRs agree
// (podCIDR wins, as kube's conversion has it).
func (nodeStrategy) Default(obj runtime.Object) {
	n := obj.(*corev1.Node)
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
	corevalidation.DefaultResourceList(n.Status.Capacity)
	corevalidation.DefaultResourceList(n.Status.Allocatable)
	if n.Spec.PodCIDR != "" && (len(n.Spec.PodCIDRs) == 0 || n.Spec.PodCIDRs[0] != n.Spec.PodCIDR) {
		n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	}
	if len(n.Spec.PodCIDRs) > 0 {
		n.Spec.PodCIDR = n.Spec.PodCIDRs[0]
	}
}

// PrepareForCreate drops what kube's feature gates drop (the removed
// dynamic kubelet config, the alpha pod preemption policy). The not-ready
// taint of new nodes is admission's (TaintNodesByCondition). Unlike
// ResetStatus, it keeps the rest of the status: a kubelet registers its
// node with one, and kube's strategy keeps it.
func (nodeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	n := obj.(*corev1.Node)
	n.Spec.ConfigSource = nil
	n.Status.Config = nil
	n.Spec.PodPreemptionPolicy = nil
}

func (nodeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, oldN := obj.(*corev1.Node), old.(*corev1.Node)
	generic.KeepStatus(obj, old)
	if oldN.Spec.ConfigSource == nil {
		n.Spec.ConfigSource = nil
	}
	if oldN.Spec.PodPreemptionPolicy == nil {
		n.Spec.PodPreemptionPolicy = nil
	}
}

func (nodeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateNode(obj.(*corev1.Node))
}

func (nodeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n := obj.(*corev1.Node)
	return append(validateNode(n), validateNodeUpdate(n, old.(*corev1.Node))...)
}

// nodeWarnings flags the removed and unused fields a node may still set.
func nodeWarnings(n *corev1.Node) []string {
	var warnings []string
	if n.Spec.ConfigSource != nil {
		warnings = append(warnings, "spec.configSource: the feature is removed")
	}
	if n.Spec.DoNotUseExternalID != "" {
		warnings = append(warnings, "spec.externalID: this field is deprecated, and is unused by Kubernetes")
	}
	for i, cidr := range n.Spec.PodCIDRs {
		warnings = append(warnings, validation.GetWarningsForCIDR(field.NewPath("spec", "podCIDRs").Index(i), cidr)...)
	}
	return warnings
}

// dropNodeConfig drops the config status a status write sends for a node
// that had none.
func dropNodeConfig(obj, old runtime.Object) {
	n, oldN := obj.(*corev1.Node), old.(*corev1.Node)
	if oldN.Status.Config == nil {
		n.Status.Config = nil
	}
}

// validateNodeStatusUpdate checks only what an update may not change:
// a status write does not revalidate the whole node.
func validateNodeStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateNodeUpdate(obj.(*corev1.Node), old.(*corev1.Node))
}

func validateNode(n *corev1.Node) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := corevalidation.ValidateObjectMeta(&n.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metaPath)
	if len(n.Spec.Taints) > 0 {
		allErrs = append(allErrs, validateNodeTaints(n.Spec.Taints, metaPath.Child("taints"))...)
	}
	allErrs = append(allErrs, validateNodeResources(n)...)
	if len(n.Spec.PodCIDRs) > 0 {
		cidrsPath := field.NewPath("spec", "podCIDRs")
		for i, cidr := range n.Spec.PodCIDRs {
			allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(cidrsPath.Index(i), cidr, true, nil)...)
		}
		if len(n.Spec.PodCIDRs) > 1 {
			if !corevalidation.IsDualStack(n.Spec.PodCIDRs, corevalidation.CIDRIsIPv6) || len(n.Spec.PodCIDRs) > 2 {
				allErrs = append(allErrs, field.Invalid(cidrsPath, n.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
			}
		}
	}
	return allErrs
}

// validateNodeResources checks the quantities of capacity and allocatable.
func validateNodeResources(n *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	for k, v := range n.Status.Capacity {
		allErrs = append(allErrs, corevalidation.ValidateResourceQuantityValue(k, v, field.NewPath("status", "capacity", string(k)))...)
	}
	for k, v := range n.Status.Allocatable {
		allErrs = append(allErrs, corevalidation.ValidateResourceQuantityValue(k, v, field.NewPath("status", "allocatable", string(k)))...)
	}
	return allErrs
}

func validateNodeUpdate(n, old *corev1.Node) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := corevalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &old.ObjectMeta, metaPath)
	allErrs = append(allErrs, validateNodeResources(n)...)
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range n.Status.Addresses {
		if seen[a] {
			allErrs = append(allErrs, field.Duplicate(field.NewPath("status", "addresses").Index(i), corevalidation.InternalValue(a)))
		}
		seen[a] = true
	}
	// podCIDRs are set once (by the node IPAM controller), then fixed.
	if len(old.Spec.PodCIDRs) > 0 {
		changed := len(old.Spec.PodCIDRs) != len(n.Spec.PodCIDRs)
		for i := 0; !changed && i < len(old.Spec.PodCIDRs); i++ {
			changed = old.Spec.PodCIDRs[i] != n.Spec.PodCIDRs[i]
		}
		if changed {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
		}
	}
	if old.Spec.ProviderID != "" && n.Spec.ProviderID != "" && old.Spec.ProviderID != n.Spec.ProviderID {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "providerID"), nil, "field cannot be modified once set"))
	}
	if old.Spec.ProviderID != "" && n.Spec.ProviderID == "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "providerID"), nil, "field cannot be cleared once set"))
	}
	if len(n.Spec.Taints) > 0 {
		allErrs = append(allErrs, validateNodeTaints(n.Spec.Taints, metaPath.Child("taints"))...)
	}
	if n.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return allErrs
}

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// validateNodeTaints: valid keys, values and effects, unique by key and
// effect. (kube reports them under metadata.taints, and so do we.)
func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, idxPath.Child("key"))...)
		if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("value"), t.Value, strings.Join(errs, ";")))
		}
		switch {
		case t.Effect == "":
			allErrs = append(allErrs, field.Required(idxPath.Child("effect"), ""))
		case !sets.New(taintEffects...).Has(t.Effect):
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("effect"), t.Effect, taintEffects))
		}
		if unique[t.Effect].Has(t.Key) {
			dup := field.Duplicate(idxPath, corevalidation.InternalValue(t))
			dup.Detail = "taints must be unique by key and effect pair"
			allErrs = append(allErrs, dup)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.New[string]()
		}
		unique[t.Effect].Insert(t.Key)
	}
	return allErrs
}

var (
	nodeSpecDocs   = corev1.NodeSystemInfo{}.SwaggerDoc()
	nodeStatusDocs = corev1.NodeStatus{}.SwaggerDoc()
)

var nodeTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Status", Type: "string", Description: "The status of the node"},
	{Name: "Roles", Type: "string", Description: "The roles of the node"},
	generic.AgeColumn,
	{Name: "Version", Type: "string", Description: nodeSpecDocs["kubeletVersion"]},
	{Name: "Internal-IP", Type: "string", Priority: 1, Description: nodeStatusDocs["addresses"]},
	{Name: "External-IP", Type: "string", Priority: 1, Description: nodeStatusDocs["addresses"]},
	{Name: "OS-Image", Type: "string", Priority: 1, Description: nodeSpecDocs["osImage"]},
	{Name: "Kernel-Version", Type: "string", Priority: 1, Description: nodeSpecDocs["kernelVersion"]},
	{Name: "Container-Runtime", Type: "string", Priority: 1, Description: nodeSpecDocs["containerRuntimeVersion"]},
}, func(n *corev1.Node) ([]interface{}, error) {
	info := n.Status.NodeInfo
	kernel := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return []interface{}{n.Name, nodeStatus(n), nodeRoles(n), generic.TranslateTimestampSince(n.CreationTimestamp), info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP), orUnknown(info.OSImage), kernel,
		orUnknown(info.ContainerRuntimeVersion)}, nil
})

// nodeStatus is kube's STATUS: Ready, NotReady or Unknown, and
// SchedulingDisabled for a cordoned node.
func nodeStatus(n *corev1.Node) string {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				status = []string{string(c.Type)}
			} else {
				status = []string{"Not" + string(c.Type)}
			}
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	return strings.Join(status, ",")
}

// nodeRoles reads node-role.kubernetes.io/<role> labels and the older
// kubernetes.io/role.
func nodeRoles(n *corev1.Node) string {
	roles := sets.New[string]()
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				roles.Insert(role)
			}
		case k == "kubernetes.io/role" && v != "":
			roles.Insert(v)
		}
	}
	if roles.Len() == 0 {
		return "<none>"
	}
	list := roles.UnsortedList()
	sort.Strings(list)
	return strings.Join(list, ",")
}

func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
