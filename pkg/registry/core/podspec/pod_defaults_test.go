package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The pull policies kube-apiserver v1.37.2 gave these images.
func TestDefaultPullPolicy(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.0", corev1.PullIfNotPresent},
		{"nginx@" + digest, corev1.PullIfNotPresent},
		{"nginx:latest@" + digest, corev1.PullAlways},
		{"registry:5000/app", corev1.PullAlways},
		{"registry:5000/app:v1", corev1.PullIfNotPresent},
		{"localhost/app", corev1.PullAlways},
		{"[::1]:5000/app:latest", corev1.PullAlways},
		{"Foo/bar:latest", corev1.PullAlways},
		{"a/b/c", corev1.PullAlways},
		// References kube cannot parse.
		{"Nginx", corev1.PullIfNotPresent},
		{"nginx:", corev1.PullIfNotPresent},
		{digest[len("sha256:"):], corev1.PullIfNotPresent},
		{"", corev1.PullIfNotPresent},
	} {
		if got := defaultPullPolicy(tc.image); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.image, got, tc.want)
		}
	}
}

func TestPodQOSClass(t *testing.T) {
	res := func(pairs ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(pairs); i += 2 {
			l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
		}
		return l
	}
	container := func(req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	guaranteed := container(res("cpu", "1", "memory", "1Gi"), res("cpu", "1000m", "memory", "1Gi"))
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want corev1.PodQOSClass
	}{
		{"nothing set", corev1.PodSpec{Containers: []corev1.Container{container(nil, nil)}}, corev1.PodQOSBestEffort},
		{"equal requests and limits", corev1.PodSpec{Containers: []corev1.Container{guaranteed}}, corev1.PodQOSGuaranteed},
		{"cpu only", corev1.PodSpec{Containers: []corev1.Container{container(res("cpu", "1"), res("cpu", "1"))}}, corev1.PodQOSBurstable},
		{"requests below limits", corev1.PodSpec{Containers: []corev1.Container{container(res("cpu", "1", "memory", "1Gi"), res("cpu", "2", "memory", "1Gi"))}}, corev1.PodQOSBurstable},
		{"one guaranteed, one best effort", corev1.PodSpec{Containers: []corev1.Container{guaranteed, container(nil, nil)}}, corev1.PodQOSBurstable},
		{"init container counts", corev1.PodSpec{InitContainers: []corev1.Container{container(res("memory", "1Gi"), nil)}, Containers: []corev1.Container{guaranteed}}, corev1.PodQOSBurstable},
		{"pod-level resources win", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")},
			Containers: []corev1.Container{container(nil, nil)},
		}, corev1.PodQOSGuaranteed},
		{"only ephemeral storage", corev1.PodSpec{Containers: []corev1.Container{container(res("ephemeral-storage", "1Gi"), nil)}}, corev1.PodQOSBestEffort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := QOSClass(&tc.spec); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}
