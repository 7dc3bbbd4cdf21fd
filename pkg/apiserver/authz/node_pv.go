package authz

import corev1 "k8s.io/api/core/v1"

// kubeletVolumeSecrets are the secrets (namespace, name) the kubelet reads
// to mount a persistent volume, as kube's VisitPVSecretNames finds those it
// marks kubeletVisible: a volume plugin's secret reference, in the
// namespace it names or (for volumes stored before it could name one) the
// claim's; of a CSI volume, the node publish, stage and expand secrets,
// not the controller's.
func kubeletVolumeSecrets(pv *corev1.PersistentVolume) [][2]string {
	var out [][2]string
	claimNS := ""
	if pv.Spec.ClaimRef != nil {
		claimNS = pv.Spec.ClaimRef.Namespace
	}
	add := func(ns, name string) {
		if name != "" {
			out = append(out, [2]string{ns, name})
		}
	}
	ref := func(r *corev1.SecretReference) {
		if r == nil {
			return
		}
		ns := claimNS
		if r.Namespace != "" {
			ns = r.Namespace
		}
		add(ns, r.Name)
	}
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.AzureFile != nil:
		ns := claimNS
		if s.AzureFile.SecretNamespace != nil && *s.AzureFile.SecretNamespace != "" {
			ns = *s.AzureFile.SecretNamespace
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil:
		ref(s.CephFS.SecretRef)
	case s.Cinder != nil:
		if s.Cinder.SecretRef != nil {
			add(s.Cinder.SecretRef.Namespace, s.Cinder.SecretRef.Name)
		}
	case s.FlexVolume != nil:
		ref(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		ref(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		ref(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		ref(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		if s.StorageOS.SecretRef != nil {
			add(s.StorageOS.SecretRef.Namespace, s.StorageOS.SecretRef.Name)
		}
	case s.CSI != nil:
		for _, r := range []*corev1.SecretReference{s.CSI.NodePublishSecretRef, s.CSI.NodeStageSecretRef, s.CSI.NodeExpandSecretRef} {
			if r != nil {
				add(r.Namespace, r.Name)
			}
		}
	}
	return out
}
