package core

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLimitRanger checks what kube's LimitRanger admission does in a
// namespace with a LimitRange, with the answers of kube-apiserver 1.37:
// new pods get the default resources (and a note saying so), pods and
// claims out of the ranges are forbidden.
func TestLimitRanger(t *testing.T) {
	ns := namespace(t)
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer,
			Max:                  corev1.ResourceList{"memory": resource.MustParse("1Gi"), "cpu": resource.MustParse("2")},
			Min:                  corev1.ResourceList{"cpu": resource.MustParse("100m")},
			Default:              corev1.ResourceList{"cpu": resource.MustParse("500m")},
			MaxLimitRequestRatio: corev1.ResourceList{"cpu": resource.MustParse("4")}},
		{Type: corev1.LimitTypePod, Max: corev1.ResourceList{"cpu": resource.MustParse("3")}},
		{Type: corev1.LimitTypePersistentVolumeClaim, Min: corev1.ResourceList{"storage": resource.MustParse("2Gi")}, Max: corev1.ResourceList{"storage": resource.MustParse("10Gi")}},
	}}}
	if _, err := clientset(t).CoreV1().LimitRanges(ns).Create(context.Background(), lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := "/api/v1/namespaces/" + ns + "/pods"
	claims := "/api/v1/namespaces/" + ns + "/persistentvolumeclaims"

	t.Run("defaults", func(t *testing.T) {
		cases := []struct {
			name, containers, note, resources string
		}{
			{"none", `[{"name":"c","image":"i"}]`, "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c",
				`{"limits":{"cpu":"500m","memory":"1Gi"},"requests":{"cpu":"500m","memory":"1Gi"}}`},
			{"memory", `[{"name":"c","image":"i","resources":{"limits":{"memory":"512Mi"}}}]`, "LimitRanger plugin set: cpu request for container c; cpu limit for container c",
				`{"limits":{"cpu":"500m","memory":"512Mi"},"requests":{"cpu":"500m","memory":"512Mi"}}`},
			{"all", `[{"name":"c","image":"i","resources":{"limits":{"memory":"512Mi","cpu":"1"},"requests":{"cpu":"1","memory":"512Mi"}}}]`, "",
				`{"limits":{"cpu":"1","memory":"512Mi"},"requests":{"cpu":"1","memory":"512Mi"}}`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := do(t, http.MethodPost, pods, `{"metadata":{"name":"`+tc.name+`"},"spec":{"containers":`+tc.containers+`}}`)
				var pod corev1.Pod
				r.decode(t, &pod)
				if r.code != http.StatusCreated || pod.Annotations["kubernetes.io/limit-ranger"] != tc.note || pod.Status.QOSClass != corev1.PodQOSGuaranteed {
					t.Fatalf("got %d %s", r.code, r.body)
				}
				if got, _ := json.Marshal(pod.Spec.Containers[0].Resources); string(got) != tc.resources {
					t.Errorf("resources %s, want %s", got, tc.resources)
				}
			})
		}
	})

	refusals := []struct {
		name, path, body, want string
	}{
		{"container", pods, `{"metadata":{"name":"p3"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"memory":"2Gi","cpu":"3"},"requests":{"cpu":"50m"}}}]}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"p3\" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, maximum cpu usage per Container is 2, but limit is 3, maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 4, but provided ratio is 60.000000]","reason":"Forbidden","details":{"name":"p3","kind":"pods"},"code":403}`},
		{"pod", pods, `{"metadata":{"name":"p4"},"spec":{"initContainers":[{"name":"i","image":"i","resources":{"limits":{"memory":"100Mi"}}}],"containers":[{"name":"a","image":"i","resources":{"limits":{"memory":"100Mi","cpu":"2"}}},{"name":"b","image":"i","resources":{"limits":{"memory":"100Mi","cpu":"2"}}}]}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"p4\" is forbidden: maximum cpu usage per Pod is 3, but limit is 4","reason":"Forbidden","details":{"name":"p4","kind":"pods"},"code":403}`},
		{"claim too small", claims, `{"metadata":{"name":"v1"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"persistentvolumeclaims \"v1\" is forbidden: minimum storage usage per PersistentVolumeClaim is 2Gi, but request is 1Gi","reason":"Forbidden","details":{"name":"v1","kind":"persistentvolumeclaims"},"code":403}`},
		{"claim too large", claims, `{"metadata":{"name":"v3"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"11Gi"}}}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"persistentvolumeclaims \"v3\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 11Gi","reason":"Forbidden","details":{"name":"v3","kind":"persistentvolumeclaims"},"code":403}`},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, http.MethodPost, tc.path, tc.body)
			if got := strings.TrimSpace(string(r.body)); r.code != http.StatusForbidden || got != tc.want {
				t.Errorf("got %d %s\nwant %s", r.code, got, tc.want)
			}
			// A dry run is refused the same way.
			if r := do(t, http.MethodPost, tc.path+"?dryRun=All", tc.body); r.code != http.StatusForbidden {
				t.Errorf("dry run: %d %s", r.code, r.body)
			}
		})
	}
	t.Run("claim within", func(t *testing.T) {
		r := do(t, http.MethodPost, claims, `{"metadata":{"name":"v2"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"5Gi"}}}}`)
		if r.code != http.StatusCreated {
			t.Errorf("got %d %s", r.code, r.body)
		}
	})
	t.Run("other namespaces", func(t *testing.T) {
		other := namespace(t)
		r := do(t, http.MethodPost, "/api/v1/namespaces/"+other+"/pods", `{"metadata":{"name":"free"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
		var pod corev1.Pod
		r.decode(t, &pod)
		if r.code != http.StatusCreated || pod.Annotations != nil || pod.Status.QOSClass != corev1.PodQOSBestEffort {
			t.Errorf("got %d %s", r.code, r.body)
		}
	})
}
