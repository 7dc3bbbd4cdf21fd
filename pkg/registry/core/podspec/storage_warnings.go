package podspec

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Warnings about storage that pods, claims and volumes share.

// PVCSpecWarnings returns the warnings for a claim's spec at path (for
// claims, ephemeral volumes and StatefulSet claim templates).
func PVCSpecWarnings(path *field.Path, spec *corev1.PersistentVolumeClaimSpec) []string {
	var w warnings
	w.add(fractionalBytes(path.Child("resources", "requests"), spec.Resources.Requests, corev1.ResourceStorage)...)
	w.add(fractionalBytes(path.Child("resources", "limits"), spec.Resources.Limits, corev1.ResourceStorage)...)
	return w
}

// deprecatedStorageClassAnnotationMessage follows the path of the beta
// storage class annotation, on volumes and claims.
const deprecatedStorageClassAnnotationMessage = `deprecated since v1.8; use "storageClassName" attribute instead`

// StorageClassAnnotationWarnings flags the beta storage class annotation
// of a volume or a claim.
func StorageClassAnnotationWarnings(annotations map[string]string) []string {
	if !hasKey(annotations, betaStorageClassAnnotation) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s", field.NewPath("metadata", "annotations").Key(betaStorageClassAnnotation), deprecatedStorageClassAnnotationMessage)}
}

// PersistentVolumeSourceWarnings flags the removed in-tree plugins a
// volume's source at path uses, in the order kube checks them on volumes
// (not that of pod volumes).
func PersistentVolumeSourceWarnings(source *corev1.PersistentVolumeSource, path *field.Path) []string {
	var w warnings
	for _, name := range []string{"cephfs", "photonPersistentDisk", "scaleIO", "storageOS", "glusterfs", "rbd"} {
		for _, plugin := range removedVolumePlugins {
			if plugin.name == name && plugin.inPV(source) {
				w.addf("%s: %s", path.Child(name), plugin.message)
			}
		}
	}
	return w
}
