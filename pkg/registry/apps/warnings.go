package apps

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
)

// Warnings of the apps/v1 workloads, as kube-apiserver v1.37 sends them:
// those of the pod template (podspec.PodTemplateWarnings, shared with pods,
// PodTemplates and ReplicationControllers) and a few of each kind.
//
// On update the template is checked only when the write changed it (or,
// for deployments, replica sets and stateful sets, anything that bumped
// the generation, as kube does): scaling or relabelling a workload whose
// template kube would warn about does not repeat the warnings. The
// /status strategies warn about nothing.

// templatePath is where the workloads keep their pod template.
var templatePath = field.NewPath("spec", "template")

func (deploymentStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	d := obj.(*appsv1.Deployment)
	return append(workload.NameWarnings(d.Name), podspec.PodTemplateWarnings(templatePath, &d.Spec.Template)...)
}

// WarningsOnUpdate: a deployment's generation also moves with its
// annotations (kubectl rollout writes them), and kube warns then too.
func (deploymentStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	d, oldD := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	if d.Generation == oldD.Generation {
		return nil
	}
	return podspec.PodTemplateWarnings(templatePath, &d.Spec.Template)
}

func (rsStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	rs := obj.(*appsv1.ReplicaSet)
	return append(workload.NameWarnings(rs.Name), podspec.PodTemplateWarnings(templatePath, &rs.Spec.Template)...)
}

func (rsStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	rs, oldRS := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	if rs.Generation == oldRS.Generation {
		return nil
	}
	return podspec.PodTemplateWarnings(templatePath, &rs.Spec.Template)
}

// WarningsOnCreate: unlike the other workloads, kube has no name warning
// for daemon sets.
func (daemonSetStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return podspec.PodTemplateWarnings(templatePath, &obj.(*appsv1.DaemonSet).Spec.Template)
}

// WarningsOnUpdate warns when the template changed; other spec changes
// (minReadySeconds, the update strategy) do not, as in kube.
func (daemonSetStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	ds, oldDS := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	if apiequality.Semantic.DeepEqual(ds.Spec.Template, oldDS.Spec.Template) {
		return nil
	}
	return podspec.PodTemplateWarnings(templatePath, &ds.Spec.Template)
}

// WarningsOnCreate: kube has no name warning for stateful sets either;
// their validation already requires a DNS label.
func (statefulSetStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	s := obj.(*appsv1.StatefulSet)
	warnings := podspec.PodTemplateWarnings(templatePath, &s.Spec.Template)
	return append(warnings, statefulSetSpecWarnings(s, field.NewPath("spec", "volumeClaimTemplates").Index)...)
}

// WarningsOnUpdate checks the template when the generation moved, and the
// claim templates and history limit always. kube names the claim
// template's spec "Spec" on update (a slip in its field path), and we
// keep its text.
func (statefulSetStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	s, oldS := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	var warnings []string
	if s.Generation != oldS.Generation {
		warnings = podspec.PodTemplateWarnings(templatePath, &s.Spec.Template)
	}
	claimPath := func(i int) *field.Path { return field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("Spec") }
	return append(warnings, statefulSetSpecWarnings(s, claimPath)...)
}

// statefulSetSpecWarnings flags fractional sizes in the claim templates
// (claimPath gives the path of the i-th claim's spec) and a negative
// history limit, which keeps every revision.
func statefulSetSpecWarnings(s *appsv1.StatefulSet, claimPath func(int) *field.Path) []string {
	var warnings []string
	for i := range s.Spec.VolumeClaimTemplates {
		warnings = append(warnings, podspec.PVCSpecWarnings(claimPath(i), &s.Spec.VolumeClaimTemplates[i].Spec)...)
	}
	if l := s.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		warnings = append(warnings, "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended")
	}
	return warnings
}
