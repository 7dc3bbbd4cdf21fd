package admission

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// podTemplateResources are the built-in resources whose objects carry a
// pod template, which kube's plugin audits and warns about (never
// refuses: the pods they make are refused).
var podTemplateResources = map[schema.GroupResource]bool{
	corev1.Resource("replicationcontrollers"): true,
	corev1.Resource("podtemplates"):           true,
	appsv1.Resource("replicasets"):            true,
	appsv1.Resource("deployments"):            true,
	appsv1.Resource("statefulsets"):           true,
	appsv1.Resource("daemonsets"):             true,
	batchv1.Resource("jobs"):                  true,
	batchv1.Resource("cronjobs"):              true,
}

// podSubresourcesUnchecked are the pod subresources whose writes cannot
// change what the checks read; any other (ephemeralcontainers, resize, a
// new one) is checked, so that an unknown way to change a pod's spec
// fails safe.
var podSubresourcesUnchecked = map[string]bool{
	"attach": true, "binding": true, "eviction": true, "exec": true,
	"log": true, "portforward": true, "proxy": true, "status": true,
}

// exemption answers for requests exempt by namespace or user, and counts
// them.
func (p *PodSecurity) exemption(req psRequest) (psVerdict, bool) {
	reason := ""
	switch {
	case p.exempt.namespaces[req.namespace()]:
		reason = "namespace"
	case p.exempt.usernames[req.user]:
		reason = "user"
	default:
		return psVerdict{}, false
	}
	p.metrics.exempted(req)
	return admitted(psapi.ExemptionReasonAnnotationKey, reason), true
}

// admitPod enforces, audits and warns the namespace's levels on a pod.
func (p *PodSecurity) admitPod(ctx context.Context, req psRequest) psVerdict {
	if podSubresourcesUnchecked[req.attrs.Subresource] {
		return psVerdict{}
	}
	if v, exempt := p.exemption(req); exempt {
		return v
	}
	ns, err := p.namespaces.GetNamespace(ctx, req.namespace())
	if err != nil {
		p.metrics.failed(true, req)
		return failed(apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", req.namespace())), err)
	}
	levels, labelErrs := psapi.PolicyToEvaluate(ns.Labels, p.defaults)
	if len(labelErrs) == 0 && levels.FullyPrivileged() {
		p.metrics.evaluated("allow", levels.Enforce, "enforce", req)
		privileged := psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()}
		return admitted(psapi.EnforcedPolicyAnnotationKey, privileged.String())
	}
	pod, ok := req.obj.(*corev1.Pod)
	if !ok {
		p.metrics.failed(true, req)
		return undecodable(req, "failed to decode pod", nil)
	}
	if req.attrs.Operation == handlers.Update {
		if req.attrs.Old == nil {
			p.metrics.failed(true, req)
			return undecodable(req, "failed to decode old object", errNoOldObject)
		}
		old, ok := req.attrs.Old.(*corev1.Pod)
		if !ok {
			p.metrics.failed(true, req)
			return undecodable(req, "failed to decode old pod", nil)
		}
		if !imagesChanged(&old.Spec, &pod.Spec) {
			return psVerdict{}
		}
	}
	return p.evaluate(req, levels, labelErrs.ToAggregate(), &pod.ObjectMeta, &pod.Spec, true)
}

var errNoOldObject = fmt.Errorf("no old object")

// admitTemplate audits and warns the namespace's levels on a workload's
// pod template; what goes wrong on the way is noted, never refused.
func (p *PodSecurity) admitTemplate(ctx context.Context, req psRequest) psVerdict {
	if req.attrs.Subresource != "" {
		return psVerdict{}
	}
	if v, exempt := p.exemption(req); exempt {
		return v
	}
	ns, err := p.namespaces.GetNamespace(ctx, req.namespace())
	if err != nil {
		p.metrics.failed(true, req)
		return admitted("error", fmt.Sprintf("failed to lookup namespace %q: %v", req.namespace(), err))
	}
	levels, labelErrs := psapi.PolicyToEvaluate(ns.Labels, p.defaults)
	if len(labelErrs) == 0 && levels.Audit.Level == psapi.LevelPrivileged && levels.Warn.Level == psapi.LevelPrivileged {
		return psVerdict{}
	}
	meta, spec, err := podTemplateOf(req.obj)
	if err != nil {
		p.metrics.failed(true, req)
		return admitted("error", fmt.Sprintf("failed to extract pod template: %v", err))
	}
	if spec == nil {
		return psVerdict{}
	}
	return p.evaluate(req, levels, labelErrs.ToAggregate(), meta, spec, false)
}

// podTemplateOf is the pod template of a workload (nil if it has none);
// a pod is its own, as in kube's extractor.
func podTemplateOf(obj runtime.Object) (*metav1.ObjectMeta, *corev1.PodSpec, error) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.ObjectMeta, &o.Spec, nil
	case *corev1.PodTemplate:
		t = &o.Template
	case *corev1.ReplicationController:
		t = o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	case nil:
		return nil, nil, fmt.Errorf("unexpected object type: %s", schema.GroupVersionKind{})
	default:
		return nil, nil, fmt.Errorf("unexpected object type: %s", obj.GetObjectKind().GroupVersionKind())
	}
	if t == nil {
		return nil, nil, nil
	}
	return &t.ObjectMeta, &t.Spec, nil
}

// evaluate checks a pod (or template) against the namespace's levels:
// enforce (pods only) refuses, audit annotates, warn warns unless the
// request is refused anyway. labelErr is what was wrong with the
// namespace's labels (their level then falls back to restricted).
func (p *PodSecurity) evaluate(req psRequest, levels psapi.Policy, labelErr error, meta *metav1.ObjectMeta, spec *corev1.PodSpec, enforce bool) psVerdict {
	if rc := spec.RuntimeClassName; rc != nil && p.exempt.runtimeClasses[*rc] {
		p.metrics.exempted(req)
		return admitted(psapi.ExemptionReasonAnnotationKey, "runtimeClass")
	}
	v := psVerdict{annotations: map[string]string{}}
	if labelErr != nil {
		v.annotations["error"] = fmt.Sprintf("Failed to parse policy: %v", labelErr)
		p.metrics.failed(false, req)
	}
	// Modes at the same level and version share one evaluation.
	seen := map[psapi.LevelVersion]policy.AggregateCheckResult{}
	check := func(lv psapi.LevelVersion) policy.AggregateCheckResult {
		r, ok := seen[lv]
		if !ok {
			r = policy.AggregateCheckResults(p.checks.EvaluatePod(lv, meta, spec))
			seen[lv] = r
		}
		return r
	}
	if enforce {
		v.annotations[psapi.EnforcedPolicyAnnotationKey] = levels.Enforce.String()
		decision := "allow"
		if r := check(levels.Enforce); !r.Allowed {
			decision = "deny"
			v.refusal = apierrors.NewForbidden(req.gr, req.attrs.Name,
				fmt.Errorf("violates PodSecurity %q: %s", levels.Enforce.String(), r.ForbiddenDetail()))
		}
		p.metrics.evaluated(decision, levels.Enforce, "enforce", req)
	}
	if r := check(levels.Audit); !r.Allowed {
		v.annotations[psapi.AuditViolationsAnnotationKey] = wouldViolate(levels.Audit, r)
		p.metrics.evaluated("deny", levels.Audit, "audit", req)
	}
	if v.refusal != nil {
		return v // no warnings on top of a refusal
	}
	if r := check(levels.Warn); !r.Allowed {
		v.warnings = append(v.warnings, wouldViolate(levels.Warn, r))
		p.metrics.evaluated("deny", levels.Warn, "warn", req)
	}
	return v
}

func wouldViolate(lv psapi.LevelVersion, r policy.AggregateCheckResult) string {
	return fmt.Sprintf("would violate PodSecurity %q: %s", lv.String(), r.ForbiddenDetail())
}

// imagesChanged tells whether a pod update changes what the checks could
// see: of a pod's mutable fields only container images (and ephemeral
// containers, added through their subresource) matter.
func imagesChanged(old, cur *corev1.PodSpec) bool {
	if len(cur.Containers) != len(old.Containers) || len(cur.InitContainers) != len(old.InitContainers) {
		return true
	}
	for i := range cur.Containers {
		if cur.Containers[i].Image != old.Containers[i].Image {
			return true
		}
	}
	for i := range cur.InitContainers {
		if cur.InitContainers[i].Image != old.InitContainers[i].Image {
			return true
		}
	}
	oldImages := make(map[string]string, len(old.EphemeralContainers))
	for _, c := range old.EphemeralContainers {
		if _, dup := oldImages[c.Name]; !dup {
			oldImages[c.Name] = c.Image
		}
	}
	for _, c := range cur.EphemeralContainers {
		if image, ok := oldImages[c.Name]; !ok || image != c.Image {
			return true
		}
	}
	return false
}
