package core

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// serviceAccountGetter serves service accounts from a map, as the
// service account storage would.
type serviceAccountGetter map[string]*corev1.ServiceAccount

func (g serviceAccountGetter) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if sa, ok := g[name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, name)
}

func TestAdmitPodServiceAccount(t *testing.T) {
	accounts := serviceAccountGetter{
		"default":    {ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}},
		"no-token":   {AutomountServiceAccountToken: ptr.To(false)},
		"with-token": {AutomountServiceAccountToken: ptr.To(false)},
	}
	for _, tc := range []struct {
		name         string
		pod          corev1.PodSpec
		accounts     rest.Getter
		wantSA       string
		wantMounted  bool
		wantSecrets  []string
		wantVolumes  int
		wantInitMnts int
	}{
		{name: "default account, not served", pod: spec(), wantSA: "default", wantMounted: true, wantVolumes: 1},
		{name: "default account copies pull secrets", pod: spec(), accounts: accounts, wantSA: "default", wantMounted: true, wantSecrets: []string{"registry"}, wantVolumes: 1},
		{name: "pull secrets of the pod win", pod: withPullSecret(spec(), "own"), accounts: accounts, wantSA: "default", wantMounted: true, wantSecrets: []string{"own"}, wantVolumes: 1},
		{name: "account without automount", pod: withSA(spec(), "no-token"), accounts: accounts, wantSA: "no-token"},
		{name: "pod setting wins over account", pod: withAutomount(withSA(spec(), "with-token"), true), accounts: accounts, wantSA: "with-token", wantMounted: true, wantVolumes: 1},
		{name: "pod opts out", pod: withAutomount(spec(), false), wantSA: "default"},
		{name: "unknown account is no error", pod: withSA(spec(), "missing"), accounts: accounts, wantSA: "missing", wantMounted: true, wantVolumes: 1},
		{name: "init containers mount it too", pod: withInit(spec()), wantSA: "default", wantMounted: true, wantVolumes: 1, wantInitMnts: 1},
		{name: "existing mount at the token path", pod: withTokenMount(spec()), wantSA: "default", wantVolumes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.pod}
			podspec.SetDefaultsPod(pod) // as the Store does before PrepareForCreate
			admitPod(context.Background(), pod, tc.accounts)
			if pod.Spec.ServiceAccountName != tc.wantSA || pod.Spec.DeprecatedServiceAccount != tc.wantSA { //nolint:staticcheck // checked on purpose
				t.Errorf("service account %q/%q, want %q", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount, tc.wantSA) //nolint:staticcheck
			}
			mounted := mountsPath(pod.Spec.Containers[0].VolumeMounts, DefaultAPITokenMountPath) &&
				strings.HasPrefix(pod.Spec.Containers[0].VolumeMounts[len(pod.Spec.Containers[0].VolumeMounts)-1].Name, serviceAccountVolumePrefix)
			if mounted != tc.wantMounted {
				t.Errorf("token mounted %v, want %v: %+v", mounted, tc.wantMounted, pod.Spec.Containers[0].VolumeMounts)
			}
			if n := len(pod.Spec.Volumes); n != tc.wantVolumes {
				t.Errorf("%d volumes, want %d", n, tc.wantVolumes)
			}
			if n := len(pod.Spec.InitContainers); n > 0 && len(pod.Spec.InitContainers[0].VolumeMounts) != tc.wantInitMnts {
				t.Errorf("init container mounts %+v", pod.Spec.InitContainers[0].VolumeMounts)
			}
			var secrets []string
			for _, s := range pod.Spec.ImagePullSecrets {
				secrets = append(secrets, s.Name)
			}
			if !slices.Equal(secrets, tc.wantSecrets) {
				t.Errorf("pull secrets %v, want %v", secrets, tc.wantSecrets)
			}
		})
	}
}

func TestDefaultTolerations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tolerations []corev1.Toleration
		wantAdded   []string
	}{
		{name: "none", wantAdded: []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}},
		{name: "tolerates everything", tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{name: "tolerates not-ready", tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}},
			wantAdded: []string{corev1.TaintNodeUnreachable}},
		{name: "NoSchedule does not count", tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			wantAdded: []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: spec()}
			pod.Spec.Tolerations = slices.Clone(tc.tolerations)
			addDefaultTolerations(&pod.Spec)
			var added []string
			for _, tol := range pod.Spec.Tolerations[len(tc.tolerations):] {
				if tol.TolerationSeconds == nil || *tol.TolerationSeconds != 300 || tol.Effect != corev1.TaintEffectNoExecute {
					t.Errorf("added %+v", tol)
				}
				added = append(added, tol.Key)
			}
			if !slices.Equal(added, tc.wantAdded) {
				t.Errorf("added %v, want %v", added, tc.wantAdded)
			}
		})
	}
}

func spec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}
}

func withSA(s corev1.PodSpec, name string) corev1.PodSpec { s.ServiceAccountName = name; return s }

func withAutomount(s corev1.PodSpec, v bool) corev1.PodSpec {
	s.AutomountServiceAccountToken = &v
	return s
}

func withPullSecret(s corev1.PodSpec, name string) corev1.PodSpec {
	s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: name}}
	return s
}

func withInit(s corev1.PodSpec) corev1.PodSpec {
	s.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}}
	return s
}

func withTokenMount(s corev1.PodSpec) corev1.PodSpec {
	s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "own", MountPath: DefaultAPITokenMountPath}}
	s.Volumes = nil
	return s
}
