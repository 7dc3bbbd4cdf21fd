package handlers

import (
	"context"
	"fmt"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// The warnings of deduplicated owner references, as kube words them. A
// patch is deduplicated after kube's mutating admission, hence the second.
const (
	duplicateOwnerReferencesWarning = ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, " +
		"and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
	duplicateOwnerReferencesAfterAdmissionWarning = ".metadata.ownerReferences contains duplicate entries after mutating admission happens; " +
		"API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
)

// dedupOwnerReferences drops the owner references of obj that repeat an
// earlier one exactly, and warns the client with their UIDs, as kube
// does (creates and updates before their managed fields are recorded,
// patches after).
func dedupOwnerReferences(ctx context.Context, obj runtime.Object, afterAdmission bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	refs := m.GetOwnerReferences()
	var kept []metav1.OwnerReference
	var duplicates []string
	seen := map[types.UID]bool{}
	for _, ref := range refs {
		if seen[ref.UID] && containsOwnerReference(kept, ref) {
			duplicates = append(duplicates, string(ref.UID))
			continue
		}
		seen[ref.UID] = true
		kept = append(kept, ref)
	}
	if len(duplicates) == 0 {
		return
	}
	format := duplicateOwnerReferencesWarning
	if afterAdmission {
		format = duplicateOwnerReferencesAfterAdmissionWarning
	}
	request.AddWarning(ctx, fmt.Sprintf(format, strings.Join(duplicates, ", ")))
	m.SetOwnerReferences(kept)
}

func containsOwnerReference(refs []metav1.OwnerReference, ref metav1.OwnerReference) bool {
	for _, r := range refs {
		if apiequality.Semantic.DeepEqual(r, ref) {
			return true
		}
	}
	return false
}
