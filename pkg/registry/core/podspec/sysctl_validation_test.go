package podspec

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// validPod is a pod ValidatePodCreate accepts, for the tests to spoil.
func validPod() *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			SecurityContext:               &corev1.PodSecurityContext{},
		},
	}
	return pod
}

// errorLines is ValidatePodCreate's errors, one a line.
func errorLines(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	var lines []string
	for _, err := range ValidatePodCreate(pod) {
		lines = append(lines, err.Error())
	}
	return lines
}

func checkErrors(t *testing.T, pod *corev1.Pod, want []string) {
	t.Helper()
	got := errorLines(t, pod)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant (kube-apiserver v1.37.2's):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSysctls: the messages are kube-apiserver v1.37.2's for the same pod.
func TestSysctls(t *testing.T) {
	t.Parallel()
	const form = `must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`
	pod := validPod()
	pod.Spec.HostNetwork, pod.Spec.HostIPC = true, true
	for _, name := range []string{"foo-", "kernel.shmmax", "bar..", "", "kernel.shmmax", "net.core.somaxconn",
		"kernel/shm_rmid_forced", "fs.mqueue.msg_max", "kernel.sem", "kernel.msgmax", "vm.swappiness", "A.b", "net..x", "net"} {
		pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: name, Value: "1"})
	}
	pod.Spec.Containers[0].Ports = nil
	p := "spec.securityContext.sysctls"
	checkErrors(t, pod, []string{
		p + `[0].name: Invalid value: "foo-": ` + form,
		p + `[1].name: Invalid value: "kernel.shmmax": may not be specified when 'hostIPC' is true`,
		p + `[2].name: Invalid value: "bar..": ` + form,
		p + `[3].name: Required value`,
		p + `[4].name: Duplicate value: "kernel.shmmax"`,
		p + `[4].name: Invalid value: "kernel.shmmax": may not be specified when 'hostIPC' is true`,
		p + `[5].name: Invalid value: "net.core.somaxconn": may not be specified when 'hostNetwork' is true`,
		p + `[6].name: Invalid value: "kernel/shm_rmid_forced": may not be specified when 'hostIPC' is true`,
		p + `[7].name: Invalid value: "fs.mqueue.msg_max": may not be specified when 'hostIPC' is true`,
		p + `[8].name: Invalid value: "kernel.sem": may not be specified when 'hostIPC' is true`,
		p + `[9].name: Invalid value: "kernel.msgmax": may not be specified when 'hostIPC' is true`,
		p + `[11].name: Invalid value: "A.b": ` + form,
		p + `[12].name: Invalid value: "net..x": ` + form,
		p + `[12].name: Invalid value: "net..x": may not be specified when 'hostNetwork' is true`,
	})
	// Without the host's namespaces, namespaced sysctls are the pod's own.
	pod.Spec.HostNetwork, pod.Spec.HostIPC = false, false
	pod.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.core.somaxconn"}, {Name: "kernel.shm_rmid_forced"}, {Name: "kernel/msgmax"}}
	checkErrors(t, pod, nil)
}

func TestNormalizeSysctl(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"kernel.shmmax": "kernel.shmmax", "kernel/shmmax": "kernel.shmmax",
		"net/ipv4/conf/eno2.100/rp_filter": "net.ipv4.conf.eno2/100.rp_filter", "net": "net",
	} {
		if got := normalizeSysctl(in); got != want {
			t.Errorf("normalizeSysctl(%q) = %q, want %q", in, got, want)
		}
	}
}
