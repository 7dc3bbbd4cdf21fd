package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	psadmission "k8s.io/pod-security-admission/admission"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// podsOf lists fixed pods, for our plugin (as stored objects) and for
// kube's library (as pods).
type podsOf []*corev1.Pod

func (p podsOf) NewList() runtime.Object { return &corev1.PodList{} }

func (p podsOf) List(context.Context, *metainternalversion.ListOptions) (*storage.ListResult, error) {
	out := &storage.ListResult{}
	for _, pod := range p {
		data, err := json.Marshal(pod)
		if err != nil {
			return nil, err
		}
		obj, err := storage.NewObject("/pods/ns/"+pod.Name, 1, data)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, obj)
	}
	return out, nil
}

func (p podsOf) ListPods(context.Context, string) ([]*corev1.Pod, error) {
	out := make([]*corev1.Pod, len(p))
	for i, pod := range p {
		out[i] = pod.DeepCopy()
	}
	return out, nil
}

// dryRunPod is a pod with a container made to violate baseline (or not,
// both false), of a controller (uid, "" none) and a runtime class.
func dryRunPod(name string, privileged, hostNetwork bool, controller types.UID, runtimeClass string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox",
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(privileged)}}}
	pod.Spec.HostNetwork = hostNetwork
	if controller != "" {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: string(controller), UID: controller, Controller: ptr.To(true)}}
	}
	if runtimeClass != "" {
		pod.Spec.RuntimeClassName = ptr.To(runtimeClass)
	}
	return pod
}

// TestPodSecurityDryRunAsKube: the warnings of a stricter enforce label
// are kube's library's for the same pods: violations grouped and
// counted, exempt runtime classes left out, one pod per controller
// first, and at most 3,000 pods checked.
func TestPodSecurityDryRunAsKube(t *testing.T) {
	var many podsOf
	for i := range 3005 {
		many = append(many, dryRunPod(fmt.Sprintf("p%04d", i), i%3 == 0, i%5 == 0, types.UID(fmt.Sprintf("rs%d", i%7)), ""))
	}
	mixed := podsOf{
		dryRunPod("b", true, false, "x", ""), dryRunPod("a", true, false, "x", ""),
		dryRunPod("c", false, true, "", ""), dryRunPod("d", true, true, "", "exempt"),
		dryRunPod("e", false, false, "y", ""), dryRunPod("f", true, true, "y", ""),
	}
	version := psapi.MajorMinorVersion(1, 37)
	enforce := psapi.LevelVersion{Level: psapi.LevelBaseline, Version: psapi.LatestVersion()}
	for name, pods := range map[string]podsOf{"over the cap": many, "mixed": mixed, "none": nil} {
		t.Run(name, func(t *testing.T) {
			conf, err := LoadPodSecurityConfiguration([]byte("apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\nexemptions:\n  runtimeClasses: [exempt]\n"))
			if err != nil {
				t.Fatal(err)
			}
			ours, err := NewPodSecurity(PodSecurityConfig{Configuration: conf, Pods: pods, Version: version})
			if err != nil {
				t.Fatal(err)
			}
			evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), &version)
			if err != nil {
				t.Fatal(err)
			}
			kube := &psadmission.Admission{Configuration: conf, Evaluator: evaluator, PodLister: pods}
			if err := kube.CompleteConfiguration(); err != nil {
				t.Fatal(err)
			}
			want := kube.EvaluatePodsInNamespace(context.Background(), "ns", enforce)
			got := ours.dryRun(context.Background(), "ns", enforce)
			t.Logf("%q", got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-kube's +ours):\n%s", diff)
			}
		})
	}
}
