package core

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// objectGetter serves objects from a map, as a storage would.
type objectGetter struct {
	resource string
	objects  map[string]runtime.Object
}

func (g objectGetter) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if obj, ok := g.objects[name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: g.resource}, name)
}

// testPodServiceAccount has the accounts default (pull secret registry),
// no-token (automount off) and strict (enforces mountable secrets: secret
// ok, pull secret okpull), in namespace ns, which exists.
func testPodServiceAccount() PodServiceAccount {
	return PodServiceAccount{
		ServiceAccounts: objectGetter{"serviceaccounts", map[string]runtime.Object{
			"default":  &corev1.ServiceAccount{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}},
			"no-token": &corev1.ServiceAccount{AutomountServiceAccountToken: ptr.To(false)},
			"strict": &corev1.ServiceAccount{
				ObjectMeta:       metav1.ObjectMeta{Name: "strict", Annotations: map[string]string{EnforceMountableSecretsAnnotation: "true"}},
				Secrets:          []corev1.ObjectReference{{Name: "ok"}},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "okpull"}},
			},
		}},
		Namespaces: objectGetter{"namespaces", map[string]runtime.Object{"ns": &corev1.Namespace{}}},
	}
}

func TestPodServiceAccountAdmit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pod         corev1.PodSpec
		wantSA      string
		wantVolume  string // the name of the token volume mounted, "" none
		wantVolumes int
		wantSecrets []string
	}{
		{name: "default account copies pull secrets", pod: spec(), wantSA: "default", wantVolume: "kube-api-access-", wantVolumes: 1, wantSecrets: []string{"registry"}},
		{name: "pull secrets of the pod win", pod: withPullSecret(spec(), "own"), wantSA: "default", wantVolume: "kube-api-access-", wantVolumes: 1, wantSecrets: []string{"own"}},
		{name: "account without automount", pod: withSA(spec(), "no-token"), wantSA: "no-token"},
		{name: "pod setting wins over account", pod: withAutomount(withSA(spec(), "no-token"), true), wantSA: "no-token", wantVolume: "kube-api-access-", wantVolumes: 1},
		{name: "pod opts out", pod: withAutomount(spec(), false), wantSA: "default", wantSecrets: []string{"registry"}},
		{name: "existing mount at the token path", pod: withTokenMount(spec()), wantSA: "default", wantVolume: "own", wantSecrets: []string{"registry"}},
		{name: "a kube-api-access volume of the pod's is mounted", pod: withVolume(spec(), "kube-api-access-mine"), wantSA: "default", wantVolume: "kube-api-access-mine", wantVolumes: 1, wantSecrets: []string{"registry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.pod}
			if pod.Spec.InitContainers == nil {
				pod.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}}
			}
			podspec.SetDefaultsPod(pod) // as the Store does before its AdmitCreate hook
			if err := testPodServiceAccount().Admit(nsContext(), pod, "p"); err != nil {
				t.Fatal(err)
			}
			if pod.Spec.ServiceAccountName != tc.wantSA || pod.Spec.DeprecatedServiceAccount != tc.wantSA { //nolint:staticcheck // checked on purpose
				t.Errorf("service account %q/%q, want %q", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount, tc.wantSA) //nolint:staticcheck
			}
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
				if got := tokenMount(c.VolumeMounts); !strings.HasPrefix(got, tc.wantVolume) || (got == "") != (tc.wantVolume == "") {
					t.Errorf("container %s mounts %q at the token path, want %q...", c.Name, got, tc.wantVolume)
				}
			}
			if n := len(pod.Spec.Volumes); n != tc.wantVolumes {
				t.Errorf("%d volumes, want %d", n, tc.wantVolumes)
			}
			if tc.wantVolumes == 1 && tc.wantVolume == serviceAccountVolumePrefix {
				if diff := cmp.Diff(tokenVolumeSource(), pod.Spec.Volumes[0].Projected); diff != "" {
					t.Errorf("token volume (-want +got):\n%s", diff)
				}
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

// TestPodServiceAccountRefusals: kube's refusals, in its words.
func TestPodServiceAccountRefusals(t *testing.T) {
	mirror := func(s corev1.PodSpec) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}}, Spec: s}
	}
	strict := func(s corev1.PodSpec) corev1.Pod { return corev1.Pod{Spec: withSA(s, "strict")} }
	env := func(s corev1.PodSpec, secret string) corev1.PodSpec {
		s.Containers[0].Env = []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "k"}}}}
		return s
	}
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string // "" admitted
	}{
		{name: "missing account", pod: corev1.Pod{Spec: withSA(spec(), "gone")},
			want: `pods "p" is forbidden: error looking up service account ns/gone: serviceaccount "gone" not found`},
		{name: "mirror pod", pod: mirror(spec())},
		{name: "mirror pod with an account", pod: mirror(withSA(spec(), "default")),
			want: `pods "p" is forbidden: a mirror pod may not reference service accounts`},
		{name: "mirror pod with a secret", pod: mirror(env(spec(), "s")),
			want: `pods "p" is forbidden: a mirror pod may not reference secrets`},
		{name: "mirror pod with a token", pod: mirror(withProjectedToken(spec())),
			want: `pods "p" is forbidden: a mirror pod may not use ServiceAccountToken volume projections`},
		{name: "allowed secrets", pod: strict(withPullSecret(env(spec(), "ok"), "okpull"))},
		{name: "secret volume", pod: strict(withSecretVolume(spec(), "bad")),
			want: `pods "p" is forbidden: volume with secret.secretName="bad" is not allowed because service account strict does not reference that secret`},
		{name: "secret env", pod: strict(env(spec(), "bad")),
			want: `pods "p" is forbidden: container c with envVar E referencing secret.secretName="bad" is not allowed because service account strict does not reference that secret`},
		{name: "pull secret", pod: strict(withPullSecret(spec(), "bad")),
			want: `pods "p" is forbidden: imagePullSecrets[0].name="bad" is not allowed because service account strict does not reference that imagePullSecret`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod.DeepCopy()
			err := testPodServiceAccount().Admit(nsContext(), pod, "p")
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want || !apierrors.IsForbidden(err)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if isMirrorPod(pod) && (pod.Spec.ServiceAccountName != tc.pod.Spec.ServiceAccountName || len(pod.Spec.Volumes) != len(tc.pod.Spec.Volumes)) {
				t.Errorf("a mirror pod changed: %+v", pod.Spec)
			}
		})
	}
}

// TestPodServiceAccountMissingNamespace: a pod of a namespace that does
// not exist is left to NamespaceLifecycle.
func TestPodServiceAccountMissingNamespace(t *testing.T) {
	ctx := request.WithNamespace(context.Background(), "gone")
	if err := testPodServiceAccount().Admit(ctx, &corev1.Pod{Spec: withSA(spec(), "missing")}, "p"); err != nil {
		t.Errorf("got %v, want none", err)
	}
	if err := testPodServiceAccount().Validate(ctx, &corev1.Pod{Spec: withSA(spec(), "missing")}, "p"); !apierrors.IsForbidden(err) {
		t.Errorf("validation: got %v, want the refusal", err)
	}
}

func TestPodServiceAccountValidate(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-x1"}, Spec: spec()}
	err := testPodServiceAccount().Validate(nsContext(), pod, "p-x1")
	if want := `pods "p-x1" is forbidden: no service account specified for pod ns/p-x1`; err == nil || err.Error() != want {
		t.Errorf("a pod without an account: %v, want %q", err, want)
	}
	pod.Spec.ServiceAccountName = "strict"
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "dbg", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "bad"}}}}}}}
	err = testPodServiceAccount().ValidateEphemeralContainers(nsContext(), pod, "p-x1")
	want := `ephemeral container dbg with envFrom referencing secret.secretName="bad" is not allowed because service account strict does not reference that secret`
	if err == nil || err.Error() != want || apierrors.IsForbidden(err) {
		t.Errorf("an ephemeral container's secret: %v, want the plain error %q", err, want)
	}
}

func nsContext() context.Context { return request.WithNamespace(context.Background(), "ns") }

// tokenMount is the volume mounted at the token path, "" none; the
// plugin's mounts are read-only.
func tokenMount(mounts []corev1.VolumeMount) string {
	for _, m := range mounts {
		if m.MountPath == DefaultAPITokenMountPath {
			if !m.ReadOnly && strings.HasPrefix(m.Name, serviceAccountVolumePrefix) {
				return "writable " + m.Name
			}
			return m.Name
		}
	}
	return ""
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

func withTokenMount(s corev1.PodSpec) corev1.PodSpec {
	mounts := []corev1.VolumeMount{{Name: "own", MountPath: DefaultAPITokenMountPath}}
	s.Containers[0].VolumeMounts = mounts
	s.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", VolumeMounts: mounts}}
	return s
}

func withVolume(s corev1.PodSpec, name string) corev1.PodSpec {
	s.Volumes = append(s.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return s
}

func withSecretVolume(s corev1.PodSpec, secret string) corev1.PodSpec {
	s.Volumes = append(s.Volumes, corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
	return s
}

func withProjectedToken(s corev1.PodSpec) corev1.PodSpec {
	s.Volumes = append(s.Volumes, corev1.Volume{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}})
	return s
}
