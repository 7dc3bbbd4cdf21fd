package podspec

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestConfigMapNames: every place a pod spec names a config map, in
// kube's order (containers of every sort, then volumes), empty names left
// out.
func TestConfigMapNames(t *testing.T) {
	ref := corev1.LocalObjectReference{Name: "envfrom"}
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i", Env: []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "init-env"}}}}}}},
		Containers: []corev1.Container{{Name: "c", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref}}}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ephemeral"}}}}}}},
		Volumes: []corev1.Volume{
			{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "volume"}}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected"}}},
				{ConfigMap: &corev1.ConfigMapProjection{}},
			}}}},
		},
	}
	want := []string{"init-env", "envfrom", "ephemeral", "volume", "projected"}
	if got := ConfigMapNames(spec); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestAPIObjectReference: what a mirror pod may not reference, in kube's
// words and order.
func TestAPIObjectReference(t *testing.T) {
	volume := func(s corev1.VolumeSource) corev1.PodSpec {
		return corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: s}}}
	}
	for _, tc := range []struct {
		name    string
		spec    corev1.PodSpec
		want    string
		wantErr bool
	}{
		{"nothing", corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}, "", false},
		{"host path and empty dir", corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
			{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}, "", false},
		{"service account", corev1.PodSpec{ServiceAccountName: "sa"}, "serviceaccounts", false},
		{"pull secret", corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "s"}}}, "secrets", false},
		{"resource claim", corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "c"}}}, "resourceclaims", false},
		{"claim", volume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}), "persistentvolumeclaims", false},
		{"csi", volume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}), "csidrivers (via CSI volumes)", false},
		{"projected token", volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{}}, {ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}),
			"serviceaccounts (via projected volumes)", false},
		{"unknown volume", volume(corev1.VolumeSource{}), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := APIObjectReference(&tc.spec)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %q %v, want %q (error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
