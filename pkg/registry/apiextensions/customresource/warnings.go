package customresource

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// standardFinalizers are kube's own, which need no domain.
var standardFinalizers = []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents, string(corev1.FinalizerKubernetes)}

// finalizerWarnings are kube's warnings on the finalizers obj adds (to
// old's, on update): names that are not qualified, or lack a domain.
func finalizerWarnings(obj, old runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	var had []string
	if old != nil {
		if oldM, err := meta.Accessor(old); err == nil {
			had = oldM.GetFinalizers()
		}
	}
	var added []string
	for _, f := range m.GetFinalizers() {
		if !slices.Contains(had, f) && !slices.Contains(added, f) {
			added = append(added, f)
		}
	}
	slices.Sort(added)
	const path = "metadata.finalizers"
	var warnings []string
	for _, f := range added {
		for _, msg := range validation.IsQualifiedName(f) {
			warnings = append(warnings, fmt.Sprintf("%s: %q: %s", path, f, msg))
		}
		if strings.Contains(f, "/") || slices.Contains(standardFinalizers, f) {
			continue
		}
		if strings.Contains(f, ".") {
			warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers", path, f))
		} else {
			warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", path, f))
		}
	}
	return warnings
}
