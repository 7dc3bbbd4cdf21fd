package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequestedName is the name of an object as the client asked for it: its
// generateName when the server generates (or generated) its name (kube's
// admission plugins run before the name is generated, and name the object
// so in their refusals).
func RequestedName(m metav1.Object) string {
	prefix, name := m.GetGenerateName(), m.GetName()
	if name == "" {
		return prefix
	}
	base := prefix[:min(len(prefix), maxGenerateNameBase)]
	if prefix == "" || len(name) != len(base)+generateNameSuffixLen || name[:len(base)] != base {
		return name
	}
	return prefix
}
