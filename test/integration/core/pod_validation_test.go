package core

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodSysctlsAndCertificates: what conformance's "Sysctls should reject
// invalid sysctls" and the projected PodCertificate expiration tests send,
// refused with 422 and kube's causes; the valid sysctl is taken.
func TestPodSysctlsAndCertificates(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	pods := clientset(t).CoreV1().Pods(ns)
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	p := pod("sysctls")
	p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
		{Name: "foo-", Value: "bar"}, {Name: "kernel.shmmax", Value: "100000000"},
		{Name: "safe-and-unsafe", Value: "100000000"}, {Name: "bar..", Value: "42"}}}
	_, err := pods.Create(context.Background(), p, metav1.CreateOptions{})
	const form = `must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`
	wantInvalid(t, err,
		`spec.securityContext.sysctls[0].name: Invalid value: "foo-": `+form,
		`spec.securityContext.sysctls[3].name: Invalid value: "bar..": `+form)

	p = pod("ok")
	p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}}}
	if _, err := pods.Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Errorf("a valid sysctl: %v", err)
	}

	for exp, msg := range map[int32]string{
		3599:            "if provided, maxExpirationSeconds must be >= 3600",
		91*24*60*60 + 1: "if provided, maxExpirationSeconds must be <= 7862400",
	} {
		p := pod("certificate")
		p.Spec.Volumes = []corev1.Volume{{Name: "pc", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
				SignerName: "example.com/spiffe", KeyType: "ED25519", MaxExpirationSeconds: &exp, CredentialBundlePath: "creds.pem"}}}}}}}
		_, err := pods.Create(context.Background(), p, metav1.CreateOptions{})
		wantInvalid(t, err, "spec.volumes[0].projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: "+fmt.Sprint(exp)+": "+msg)
	}
}
