package admission

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// The dry run of a stricter enforce label checks at most this many of
// the namespace's pods, for at most this long (or half the request's
// remaining time), as kube's plugin does: it warns, it must not stall
// the update.
const (
	dryRunMaxPods = 3000
	dryRunTimeout = time.Second
)

// admitNamespace refuses invalid pod-security labels (new ones: labels
// already invalid may stay), and warns when an update makes the enforced
// level stricter about the namespace's pods that would be refused, or
// when an exempt namespace asks for a level that will be ignored.
func (p *PodSecurity) admitNamespace(ctx context.Context, req psRequest) psVerdict {
	if req.attrs.Subresource != "" {
		return psVerdict{}
	}
	ns, ok := req.obj.(*corev1.Namespace)
	if !ok {
		return undecodable(req, "failed to decode namespace", nil)
	}
	levels, labelErrs := psapi.PolicyToEvaluate(ns.Labels, p.defaults)
	invalid := func() psVerdict {
		return psVerdict{refusal: apierrors.NewInvalid(req.attrs.Kind.GroupKind(), req.attrs.Name, labelErrs)}
	}
	if req.attrs.Operation == handlers.Create {
		if len(labelErrs) > 0 {
			return invalid()
		}
		return p.exemptNamespaceWarning(req, levels, ns.Labels)
	}
	// kube's messages for these two have a doubled space.
	if req.attrs.Old == nil {
		return undecodable(req, "failed to decode  old object", errNoOldObject)
	}
	old, ok := req.attrs.Old.(*corev1.Namespace)
	if !ok {
		return undecodable(req, "failed to decode  old namespace", nil)
	}
	oldLevels, oldErrs := psapi.PolicyToEvaluate(old.Labels, p.defaults)
	if len(labelErrs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(labelErrs, oldErrs)) {
		return invalid()
	}
	if !stricter(oldLevels.Enforce, levels.Enforce) {
		return psVerdict{}
	}
	if p.exempt.namespaces[req.namespace()] {
		return p.exemptNamespaceWarning(req, levels, ns.Labels)
	}
	return psVerdict{warnings: p.dryRun(ctx, ns.Name, levels.Enforce)}
}

// stricter tells whether a namespace's pods need checking against a new
// enforce level: not when it is unchanged or privileged, nor when only
// the level changed and it got looser (a version change may tighten it).
func stricter(old, cur psapi.LevelVersion) bool {
	switch {
	case cur == old, cur.Level == psapi.LevelPrivileged:
		return false
	case cur.Version == old.Version:
		return psapi.CompareLevels(cur.Level, old.Level) > 0
	}
	return true
}

// exemptNamespaceWarning warns that an exempt namespace's labels ask for
// levels that will be ignored: those of its modes not privileged that a
// label sets, when they differ from the defaults.
func (p *PodSecurity) exemptNamespaceWarning(req psRequest, levels psapi.Policy, labels map[string]string) psVerdict {
	if !p.exempt.namespaces[req.namespace()] || levels.FullyPrivileged() || levels.Equivalent(&p.defaults) {
		return psVerdict{}
	}
	modes := []struct {
		name                string
		lv                  psapi.LevelVersion
		levelKey, versionKy string
	}{
		{"enforce", levels.Enforce, psapi.EnforceLevelLabel, psapi.EnforceVersionLabel},
		{"audit", levels.Audit, psapi.AuditLevelLabel, psapi.AuditVersionLabel},
		{"warn", levels.Warn, psapi.WarnLevelLabel, psapi.WarnVersionLabel},
	}
	var set []string
	for _, m := range modes {
		_, hasLevel := labels[m.levelKey]
		_, hasVersion := labels[m.versionKy]
		if m.lv.Level != psapi.LevelPrivileged && (hasLevel || hasVersion) {
			set = append(set, m.name+"="+m.lv.String())
		}
	}
	return psVerdict{warnings: []string{fmt.Sprintf(
		"namespace %q is exempt from Pod Security, and the policy (%s) will be ignored",
		req.namespace(), strings.Join(set, ", "))}}
}

// dryRun checks the namespace's pods against a new enforce level and
// returns the warnings: one per distinct violation, naming the first pod
// (by name) that has it and how many others do.
func (p *PodSecurity) dryRun(ctx context.Context, namespace string, enforce psapi.LevelVersion) []string {
	timeout := dryRunTimeout
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline)/2 < timeout {
		timeout = time.Until(deadline) / 2
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pods, err := p.namespacePods(ctx, namespace)
	if err != nil {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	pods = p.dryRunOrder(pods)
	type violators struct {
		first string
		count int
	}
	byReason := map[string]*violators{}
	checked := 0
	for _, pod := range pods {
		if checked == dryRunMaxPods {
			break
		}
		checked++
		r := policy.AggregateCheckResults(p.checks.EvaluatePod(enforce, &pod.ObjectMeta, &pod.Spec))
		if !r.Allowed {
			reason := r.ForbiddenReason()
			if v := byReason[reason]; v == nil {
				byReason[reason] = &violators{first: pod.Name, count: 1}
			} else {
				v.count++
				if pod.Name < v.first {
					v.first = pod.Name
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	var warnings, perReason []string
	if checked < len(pods) {
		warnings = append(warnings, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, len(pods)))
	}
	if len(byReason) > 0 {
		warnings = append(warnings, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", namespace, enforce.String()))
	}
	for reason, v := range byReason {
		who := v.first
		switch v.count {
		case 1:
		case 2:
			who += " (and 1 other pod)"
		default:
			who += fmt.Sprintf(" (and %d other pods)", v.count-1)
		}
		perReason = append(perReason, who+": "+reason)
	}
	sort.Strings(perReason)
	return append(warnings, perReason...)
}

// dryRunOrder drops the pods of exempt runtime classes and puts first
// one pod of each controller (and those without one), so that a capped
// or timed-out dry run sees as many distinct pod specs as it can.
func (p *PodSecurity) dryRunOrder(pods []*corev1.Pod) []*corev1.Pod {
	var first, rest []*corev1.Pod
	controllers := map[types.UID]bool{}
	for _, pod := range pods {
		if rc := pod.Spec.RuntimeClassName; rc != nil && p.exempt.runtimeClasses[*rc] {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			first = append(first, pod)
		case controllers[ref.UID]:
			rest = append(rest, pod)
		default:
			controllers[ref.UID] = true
			first = append(first, pod)
		}
	}
	return append(first, rest...)
}

// namespacePods lists a namespace's pods from the watch cache, as kube's
// plugin lists its informer's.
func (p *PodSecurity) namespacePods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	list, err := p.pods.List(request.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for _, item := range list.Items {
		pod := &corev1.Pod{}
		if err := item.Decode(pod); err != nil {
			return nil, err
		}
		out = append(out, pod)
	}
	return out, nil
}
