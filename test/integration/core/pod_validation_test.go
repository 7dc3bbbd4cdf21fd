package core

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
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

// TestPodSecurityContexts: a pod's and a deployment template's security
// contexts are validated as kube validates them (422, kube's causes); a
// valid one is taken.
func TestPodSecurityContexts(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	client := clientset(t)
	minusOne, no, yes := int64(-1), false, true
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sc"}, Spec: corev1.PodSpec{
		ShareProcessNamespace: &yes, HostPID: true,
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: &minusOne},
		Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}}}}}
	_, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	wantInvalid(t, err,
		"spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
		"spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
		"spec.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled")

	labels := map[string]string{"app": "sc"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "sc"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: &no, Privileged: &yes}}}}}}}
	_, err = client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{})
	wantInvalid(t, err, `spec.template.spec.containers[0].securityContext: Invalid value: {"Capabilities":null,"Privileged":true,`+
		`"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":null,`+
		`"AllowPrivilegeEscalation":false,"ProcMount":null,"SeccompProfile":null,"AppArmorProfile":null}: `+
		"cannot set `allowPrivilegeEscalation` to false and `privileged` to true")

	p.Spec.ShareProcessNamespace, p.Spec.SecurityContext.RunAsUser = nil, nil
	p.Spec.Containers[0].SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeRuntimeDefault
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Errorf("a valid security context: %v", err)
	}
}
