package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// The expected messages below were recorded from kube-apiserver v1.37.2
// with the same pods and requests.

// resizablePod has a sidecar (so that it stays Burstable whatever the
// app's resources become) and a plain init container.
func resizablePod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr(false),
			InitContainers: []corev1.Container{
				{Name: "init", Image: "busybox"},
				{Name: "side", Image: "busybox", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways), Resources: resources("100m", "", "200m", "")},
			},
			Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: resources("100m", "64Mi", "200m", "128Mi")}},
		},
	}
}

func resources(cpuRequest, memRequest, cpuLimit, memLimit string) corev1.ResourceRequirements {
	list := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	return corev1.ResourceRequirements{Requests: list(cpuRequest, memRequest), Limits: list(cpuLimit, memLimit)}
}

func createPod(t *testing.T, pods typedcorev1.PodInterface, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := pods.Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// TestEphemeralContainers: what kubectl debug writes. Only
// spec.ephemeralContainers changes (defaulted, validated as containers
// with fewer fields allowed); existing ones are neither removed nor
// changed; the generation counts the change; static pods take none.
func TestEphemeralContainers(t *testing.T) {
	t.Parallel()
	pods := clientset(t).CoreV1().Pods(namespace(t))
	pod := createPod(t, pods, resizablePod("debugged"))

	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox", Stdin: true, TTY: true},
		TargetContainerName:      "app",
	}}
	pod.Labels = map[string]string{"ignored": "here"}
	pod.Spec.Containers[0].Image = "ignored"
	updated, err := pods.UpdateEphemeralContainers(t.Context(), pod.Name, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "dbg", Image: "busybox", Stdin: true, TTY: true, ImagePullPolicy: corev1.PullAlways,
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		},
		TargetContainerName: "app",
	}
	if got := updated.Spec.EphemeralContainers; len(got) != 1 || got[0].Name != want.Name || got[0].ImagePullPolicy != want.ImagePullPolicy ||
		got[0].TerminationMessagePath != want.TerminationMessagePath || got[0].TerminationMessagePolicy != want.TerminationMessagePolicy || got[0].TargetContainerName != "app" {
		t.Errorf("ephemeral containers %+v, want %+v", got, want)
	}
	if updated.Generation != 2 || updated.Labels != nil || updated.Spec.Containers[0].Image != "nginx" {
		t.Errorf("generation %d, labels %v, image %q: want 2, none, nginx (only ephemeral containers change)",
			updated.Generation, updated.Labels, updated.Spec.Containers[0].Image)
	}

	patch := func(pt types.PatchType, body string) error {
		_, err := pods.Patch(t.Context(), pod.Name, pt, []byte(body), metav1.PatchOptions{}, "ephemeralcontainers")
		return err
	}
	err = patch(types.StrategicMergePatchType, `{"spec":{"ephemeralContainers":[{"name":"bad","ports":[{"containerPort":80}],`+
		`"resources":{"requests":{"cpu":"1"}},"lifecycle":{"preStop":{"exec":{"command":["x"]}}},"readinessProbe":{"exec":{"command":["x"]}},`+
		`"volumeMounts":[{"name":"nope","mountPath":"/x","subPath":"a"}],"targetContainerName":"missing"},{"name":"app","image":"x"}]}}`)
	const forbidden = "Forbidden: cannot be set for an Ephemeral Container"
	wantInvalid(t, err,
		"spec.ephemeralContainers[0].image: Required value",
		`spec.ephemeralContainers[0].volumeMounts[0].name: Not found: "nope"`,
		`spec.ephemeralContainers[0].targetContainerName: Not found: "missing"`,
		"spec.ephemeralContainers[0].ports: "+forbidden,
		"spec.ephemeralContainers[0].resources: "+forbidden,
		"spec.ephemeralContainers[0].readinessProbe: "+forbidden,
		"spec.ephemeralContainers[0].lifecycle: "+forbidden,
		"spec.ephemeralContainers[0].volumeMounts[0].subPath: "+forbidden,
		`spec.ephemeralContainers[1].name: Duplicate value: "app"`,
	)
	err = patch(types.JSONPatchType, `[{"op":"remove","path":"/spec/ephemeralContainers/0"}]`)
	wantInvalid(t, err, "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be removed\n")
	err = patch(types.JSONPatchType, `[{"op":"replace","path":"/spec/ephemeralContainers/0/image","value":"alpine"}]`)
	wantInvalid(t, err, "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be changed\n"+
		"@@ -1,6 +1,6 @@\n {\n  \"Name\": \"dbg\",\n- \"Image\": \"busybox\",\n+ \"Image\": \"alpine\",\n  \"Command\": null,\n  \"Args\": null,\n  \"WorkingDir\": \"\",\n")

	static := resizablePod("static")
	static.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "abc"}
	static.Spec.NodeName = "n1"
	static = createPod(t, pods, static)
	_, err = pods.Patch(t.Context(), static.Name, types.StrategicMergePatchType,
		[]byte(`{"spec":{"ephemeralContainers":[{"name":"dbg","image":"busybox"}]}}`), metav1.PatchOptions{}, "ephemeralcontainers")
	wantInvalid(t, err, "[]: Forbidden: static pods do not support ephemeral containers")

	// The main resource refuses them, as kube does.
	got, err := pods.Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.EphemeralContainers = nil
	if _, err := pods.Update(t.Context(), got, metav1.UpdateOptions{}); err == nil {
		t.Error("an update of the pod removed its ephemeral containers")
	}
}

// TestPodResize: in-place resize changes the containers' cpu and memory
// (and init containers', sidecars' and the pod's), nothing else; kube's
// refusals with its messages.
func TestPodResize(t *testing.T) {
	t.Parallel()
	pods := clientset(t).CoreV1().Pods(namespace(t))
	pod := createPod(t, pods, resizablePod("resized"))
	resize := func(name string, pt types.PatchType, body string) (*corev1.Pod, error) {
		return pods.Patch(t.Context(), name, pt, []byte(body), metav1.PatchOptions{}, "resize")
	}

	got, err := resize(pod.Name, types.StrategicMergePatchType,
		`{"metadata":{"labels":{"ignored":"here"}},"spec":{"containers":[{"name":"app","image":"ignored","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"300m"}}}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := resources("150m", "64Mi", "300m", "128Mi"); !equalResources(got.Spec.Containers[0].Resources, want) {
		t.Errorf("resources %v, want %v", got.Spec.Containers[0].Resources, want)
	}
	if got.Generation != 2 || got.Labels != nil || got.Spec.Containers[0].Image != "nginx" {
		t.Errorf("generation %d, labels %v, image %q: want 2, none, nginx", got.Generation, got.Labels, got.Spec.Containers[0].Image)
	}
	// Init containers resize too (GA in 1.37), sidecars and plain ones.
	if got, err = resize(pod.Name, types.JSONPatchType, `[{"op":"add","path":"/spec/initContainers/0/resources","value":{"requests":{"cpu":"50m"}}},`+
		`{"op":"replace","path":"/spec/initContainers/1/resources/requests/cpu","value":"150m"}]`); err != nil {
		t.Fatal(err)
	}
	if q := got.Spec.InitContainers[1].Resources.Requests[corev1.ResourceCPU]; q.String() != "150m" || got.Generation != 3 {
		t.Errorf("sidecar cpu request %s, generation %d", q.String(), got.Generation)
	}

	for _, tc := range []struct {
		name, pod string
		pt        types.PatchType
		body      string
		want      []string
	}{
		{"ephemeral storage", pod.Name, types.StrategicMergePatchType,
			`{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}`,
			[]string{"spec: Forbidden: only cpu and memory resources are mutable"}},
		{"resize policy", pod.Name, types.StrategicMergePatchType,
			`{"spec":{"containers":[{"name":"app","resizePolicy":[{"resourceName":"cpu","restartPolicy":"RestartContainer"}]}]}}`,
			[]string{"spec: Forbidden: only cpu and memory resources are mutable"}},
		{"container added", pod.Name, types.JSONPatchType, `[{"op":"add","path":"/spec/containers/-","value":{"name":"two","image":"x"}}]`,
			[]string{"spec.containers: Forbidden: containers may not be added or removed on resize"}},
		{"limits removed", pod.Name, types.JSONPatchType, `[{"op":"remove","path":"/spec/containers/0/resources/limits"}]`,
			[]string{"spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resize(tc.pod, tc.pt, tc.body)
			wantInvalid(t, err, tc.want...)
		})
	}

	bestEffort := createPod(t, pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "besteffort"},
		Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr(false), Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}})
	_, err = resize(bestEffort.Name, types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}`)
	wantInvalid(t, err, `spec: Invalid value: "BestEffort": Pod QOS Class may not change as a result of resizing`)

	windows := resizablePod("windows")
	windows.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	windows.Spec.InitContainers = nil
	windows = createPod(t, pods, windows)
	_, err = resize(windows.Name, types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"150m"}}}]}}`)
	wantInvalid(t, err, "[]: Forbidden: windows pods cannot be resized")
}

func equalResources(a, b corev1.ResourceRequirements) bool {
	for _, pair := range [][2]corev1.ResourceList{{a.Requests, b.Requests}, {a.Limits, b.Limits}} {
		if len(pair[0]) != len(pair[1]) {
			return false
		}
		for name, q := range pair[0] {
			if q.Cmp(pair[1][name]) != 0 {
				return false
			}
		}
	}
	return true
}

// TestPodResizeApply: server-side apply through pods/resize changes only
// the resources, and records what kube-apiserver v1.37.2 records for the
// same apply: every field the configuration names, those the strategy
// dropped (image, labels) too, since kube's endpoint resets none.
func TestPodResizeApply(t *testing.T) {
	t.Parallel()
	pods := clientset(t).CoreV1().Pods(namespace(t))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "applied"}, Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr(false),
		Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: resources("100m", "64Mi", "200m", "128Mi")}}}}
	createPod(t, pods, pod)
	got, err := pods.Patch(t.Context(), pod.Name, types.ApplyPatchType,
		[]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"applied","labels":{"x":"y"}},"spec":{"containers":[{"name":"app","image":"other","resources":{"requests":{"cpu":"150m"}}}]}}`),
		metav1.PatchOptions{FieldManager: "resizer", Force: ptr(true)}, "resize")
	if err != nil {
		t.Fatal(err)
	}
	if want := resources("150m", "64Mi", "200m", "128Mi"); !equalResources(got.Spec.Containers[0].Resources, want) || got.Spec.Containers[0].Image != "nginx" || got.Labels != nil {
		t.Errorf("resources %v, image %q, labels %v", got.Spec.Containers[0].Resources, got.Spec.Containers[0].Image, got.Labels)
	}
	const want = `{"f:metadata":{"f:labels":{"f:x":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{"f:requests":{"f:cpu":{}}}}}}}`
	found := false
	for _, m := range got.ManagedFields {
		if m.Manager != "resizer" {
			continue
		}
		found = true
		if m.Operation != metav1.ManagedFieldsOperationApply || m.Subresource != "resize" || string(m.FieldsV1.Raw) != want {
			t.Errorf("resizer's entry: %s %q %s\nwant Apply \"resize\" %s", m.Operation, m.Subresource, m.FieldsV1.Raw, want)
		}
	}
	if !found {
		t.Errorf("no managed fields entry of the resizer: %+v", got.ManagedFields)
	}
}
