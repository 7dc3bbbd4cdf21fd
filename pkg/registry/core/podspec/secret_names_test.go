package podspec

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSecretNames: every place a pod spec names a secret, in kube's order
// (pull secrets, containers of every sort, volumes), empty names left out.
func TestSecretNames(t *testing.T) {
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	envFrom := func(name string) []corev1.EnvFromSource {
		return []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *ref(name)}}}
	}
	env := func(name string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: *ref(name)}}}}
	}
	spec := &corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}, {Name: ""}},
		InitContainers:   []corev1.Container{{Name: "i", Env: env("init-env")}},
		Containers:       []corev1.Container{{Name: "c", EnvFrom: envFrom("envfrom"), Env: env("env")}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "e", EnvFrom: envFrom("ephemeral")}}},
	}
	for _, source := range []corev1.VolumeSource{
		{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "azure"}},
		{CephFS: &corev1.CephFSVolumeSource{SecretRef: ref("cephfs")}},
		{Cinder: &corev1.CinderVolumeSource{SecretRef: ref("cinder")}},
		{FlexVolume: &corev1.FlexVolumeSource{SecretRef: ref("flex")}},
		{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: *ref("projected")}}, {ConfigMap: &corev1.ConfigMapProjection{}}}}},
		{RBD: &corev1.RBDVolumeSource{SecretRef: ref("rbd")}},
		{Secret: &corev1.SecretVolumeSource{SecretName: "secret"}},
		{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: ref("scaleio")}},
		{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: ref("iscsi")}},
		{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: ref("storageos")}},
		{CSI: &corev1.CSIVolumeSource{NodePublishSecretRef: ref("csi")}},
		{CSI: &corev1.CSIVolumeSource{}},
		{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	} {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "v", VolumeSource: source})
	}
	want := []string{"pull", "init-env", "envfrom", "env", "ephemeral", "azure", "cephfs", "cinder", "flex", "projected",
		"rbd", "secret", "scaleio", "iscsi", "storageos", "csi"}
	if got := SecretNames(spec); !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
