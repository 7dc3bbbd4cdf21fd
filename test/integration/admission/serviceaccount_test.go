package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// The ServiceAccount admission plugin, as kube-apiserver 1.37.2 runs it
// by default: new pods get an account, must have one that exists, and
// mount the API credentials. Without a controller manager, kube has no
// "default" account in a new namespace; these tests create it where
// missing (miniapiserver creates it with the namespace).

const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

var tokenVolumeName = regexp.MustCompile(`^kube-api-access-[a-z0-9]{5}$`)

// tokenVolume is the projected volume of the credentials, as kube's
// plugin writes it (and the pod's defaults leave it).
var tokenVolume = &corev1.ProjectedVolumeSource{
	DefaultMode: ptr.To[int32](420),
	Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
		{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
		}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
			Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
		}}}},
	},
}

// saNamespace is a namespace of the test's with the account "default".
func saNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ns := namespace(t)
	createAccount(t, cs, ns, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	return ns
}

func createAccount(t *testing.T, cs kubernetes.Interface, ns string, sa *corev1.ServiceAccount) {
	t.Helper()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx(t), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func podOf(name string, containers ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c, Image: "busybox"})
	}
	return pod
}

// TestServiceAccountMounts: a pod naming no account gets "default" and,
// in every init and regular container without a mount at the token path,
// a read-only mount of one projected volume, kube's exactly; a container
// that mounts something there keeps it.
func TestServiceAccountMounts(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := saNamespace(t, cs)
	pod := podOf("p", "c", "own")
	pod.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "mine", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: tokenPath}}
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "default" || got.Spec.DeprecatedServiceAccount != "default" { //nolint:staticcheck // kube sets both
		t.Errorf("service account %q, %q; want default", got.Spec.ServiceAccountName, got.Spec.DeprecatedServiceAccount) //nolint:staticcheck
	}
	if len(got.Spec.Volumes) != 2 || !tokenVolumeName.MatchString(got.Spec.Volumes[1].Name) {
		t.Fatalf("volumes %+v, want mine and kube-api-access-xxxxx", got.Spec.Volumes)
	}
	if diff := cmp.Diff(tokenVolume, got.Spec.Volumes[1].Projected); diff != "" {
		t.Errorf("the token volume (-kube's +got):\n%s", diff)
	}
	mount := corev1.VolumeMount{Name: got.Spec.Volumes[1].Name, ReadOnly: true, MountPath: tokenPath}
	for _, c := range []corev1.Container{got.Spec.InitContainers[0], got.Spec.Containers[0]} {
		if diff := cmp.Diff([]corev1.VolumeMount{mount}, c.VolumeMounts); diff != "" {
			t.Errorf("container %s's mounts (-want +got):\n%s", c.Name, diff)
		}
	}
	if diff := cmp.Diff(pod.Spec.Containers[1].VolumeMounts, got.Spec.Containers[1].VolumeMounts); diff != "" {
		t.Errorf("the mount of its own at the token path (-want +got):\n%s", diff)
	}
}

// TestServiceAccountAutomount: automountServiceAccountToken false on the
// account or on the pod mounts nothing; the pod's choice wins.
func TestServiceAccountAutomount(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := saNamespace(t, cs)
	createAccount(t, cs, ns, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet"}, AutomountServiceAccountToken: ptr.To(false)})
	for _, tc := range []struct {
		name, account string
		automount     *bool
		wantMounted   bool
	}{
		{name: "account-off", account: "quiet"},
		{name: "pod-off", automount: ptr.To(false)},
		{name: "pod-on-account-off", account: "quiet", automount: ptr.To(true), wantMounted: true},
	} {
		pod := podOf(tc.name, "c")
		pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken = tc.account, tc.automount
		got, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		mounted := len(got.Spec.Volumes) == 1 && len(got.Spec.Containers[0].VolumeMounts) == 1
		if mounted != tc.wantMounted || !mounted && (len(got.Spec.Volumes) > 0 || len(got.Spec.Containers[0].VolumeMounts) > 0) {
			t.Errorf("%s: volumes %+v, mounts %+v; want mounted %v", tc.name, got.Spec.Volumes, got.Spec.Containers[0].VolumeMounts, tc.wantMounted)
		}
	}
}

// TestServiceAccountPullSecrets: a pod without image pull secrets gets
// its account's; a pod with some keeps its own.
func TestServiceAccountPullSecrets(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	createAccount(t, cs, ns, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry-a"}, {Name: "registry-b"}}})
	for _, tc := range []struct {
		name string
		own  []corev1.LocalObjectReference
		want []corev1.LocalObjectReference
	}{
		{name: "copied", want: []corev1.LocalObjectReference{{Name: "registry-a"}, {Name: "registry-b"}}},
		{name: "own", own: []corev1.LocalObjectReference{{Name: "mine"}}, want: []corev1.LocalObjectReference{{Name: "mine"}}},
	} {
		pod := podOf(tc.name, "c")
		pod.Spec.ServiceAccountName, pod.Spec.ImagePullSecrets = "puller", tc.own
		got, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got.Spec.ImagePullSecrets); diff != "" {
			t.Errorf("%s: image pull secrets (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestServiceAccountMissing: a pod whose account does not exist is
// refused (403) in kube's words, naming the pod as the request does (the
// generateName prefix of a generated name); a pod of a namespace that
// does not exist is refused by NamespaceLifecycle first (404).
func TestServiceAccountMissing(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := saNamespace(t, cs)
	pod := podOf("p", "c")
	pod.Spec.ServiceAccountName = "missing"
	_, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	want := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: `pods "p" is forbidden: error looking up service account ` + ns + `/missing: serviceaccount "missing" not found`,
		Details: &metav1.StatusDetails{Name: "p", Kind: "pods"}}
	if diff := cmp.Diff(want, statusOf(t, err), ignoreTypeMeta); diff != "" {
		t.Errorf("missing account (-kube's +got):\n%s", diff)
	}
	pod = podOf("", "c")
	pod.GenerateName, pod.Spec.ServiceAccountName = "gen-", "missing"
	_, err = cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusForbidden || s.Details == nil || s.Details.Name != "gen-" {
		t.Errorf("a generated name: %+v", s)
	}
	_, err = cs.CoreV1().Pods(ns+"-nowhere").Create(ctx(t), podOf("p", "c"), metav1.CreateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusNotFound || s.Message != `namespaces "`+ns+`-nowhere" not found` {
		t.Errorf("a namespace that does not exist: %+v", s)
	}
}

// withPodMutator registers the test webhook server's path as the
// mutating webhook of new pods in a namespace of the test's with the
// account "default".
func withPodMutator(t *testing.T, path string) (kubernetes.Interface, string) {
	t.Helper()
	w := startWebhookServer(t)
	cs := clientset(t)
	ns := saNamespace(t, cs)
	registerMutating(t, mutating("pods.admission.test", w, path, ns, rule("", "v1", []string{"pods"}, admissionregistrationv1.Create)))
	return cs, ns
}

// TestServiceAccountAfterWebhooks: a new pod is checked again once the
// mutating webhooks have changed it (kube runs the plugin again then): an
// account a webhook names must exist too. The pod is named as the request
// names it (the generateName prefix).
func TestServiceAccountAfterWebhooks(t *testing.T) {
	t.Parallel()
	cs, ns := withPodMutator(t, "/ghost-account")
	eventually(t, func(int) error {
		pod := podOf("", "c")
		pod.GenerateName = "gen-"
		_, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
		if err == nil {
			return errors.New("the webhook is not called yet")
		}
		want := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: `pods "gen-" is forbidden: error looking up service account ` + ns + `/ghost: serviceaccount "ghost" not found`,
			Details: &metav1.StatusDetails{Name: "gen-", Kind: "pods"}}
		if diff := cmp.Diff(want, statusOf(t, err), ignoreTypeMeta); diff != "" {
			t.Fatalf("an account a webhook names (-kube's +got):\n%s", diff)
		}
		return nil
	})
}

// TestServiceAccountSidecar: a container a mutating webhook adds (a
// sidecar injector) mounts the pod's credentials too, from the same
// volume: kube runs its built-in plugins again after a webhook changed
// the pod.
func TestServiceAccountSidecar(t *testing.T) {
	t.Parallel()
	cs, ns := withPodMutator(t, "/sidecar")
	var pod *corev1.Pod
	eventually(t, func(i int) error {
		var err error
		if pod, err = cs.CoreV1().Pods(ns).Create(ctx(t), podOf(fmt.Sprintf("p%d", i), "app"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Containers) < 2 {
			return errors.New("the webhook is not called yet")
		}
		return nil
	})
	if len(pod.Spec.Volumes) != 1 || !tokenVolumeName.MatchString(pod.Spec.Volumes[0].Name) {
		t.Fatalf("volumes %+v, want one kube-api-access-xxxxx", pod.Spec.Volumes)
	}
	mount := corev1.VolumeMount{Name: pod.Spec.Volumes[0].Name, ReadOnly: true, MountPath: tokenPath}
	for _, c := range pod.Spec.Containers {
		if diff := cmp.Diff([]corev1.VolumeMount{mount}, c.VolumeMounts); diff != "" {
			t.Errorf("container %s's mounts (-want +got):\n%s", c.Name, diff)
		}
	}
}

var ignoreTypeMeta = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "TypeMeta" || p.String() == "ListMeta" }, cmp.Ignore())

// TestServiceAccountMirrorPods: a mirror pod gets no account and no
// credentials, and may reference no account, secret or token.
func TestServiceAccountMirrorPods(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := saNamespace(t, cs)
	mirror := func(name string, change func(*corev1.PodSpec)) *corev1.Pod {
		pod := podOf(name, "c")
		pod.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "mirror"}
		pod.Spec.NodeName = "node-1"
		change(&pod.Spec)
		return pod
	}
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), mirror("plain", func(*corev1.PodSpec) {}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "" || len(got.Spec.Volumes) > 0 || len(got.Spec.Containers[0].VolumeMounts) > 0 {
		t.Errorf("a mirror pod was given an account or credentials: %+v", got.Spec)
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.PodSpec)
		want   string
	}{
		{"account", func(s *corev1.PodSpec) { s.ServiceAccountName = "default" }, "a mirror pod may not reference service accounts"},
		{"pull-secret", func(s *corev1.PodSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "s"}} }, "a mirror pod may not reference secrets"},
		{"secret-env", func(s *corev1.PodSpec) {
			s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}}
		}, "a mirror pod may not reference secrets"},
		{"token", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}}
		}, "a mirror pod may not use ServiceAccountToken volume projections"},
	} {
		_, err := cs.CoreV1().Pods(ns).Create(ctx(t), mirror(tc.name, tc.change), metav1.CreateOptions{})
		if s := statusOf(t, err); s.Code != http.StatusForbidden || s.Message != `pods "`+tc.name+`" is forbidden: `+tc.want {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
}

// TestServiceAccountMountableSecrets: an account annotated
// kubernetes.io/enforce-mountable-secrets=true limits its pods (403) and
// the ephemeral containers added to them (kube answers 500 there) to the
// secrets it lists.
func TestServiceAccountMountableSecrets(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	createAccount(t, cs, ns, &corev1.ServiceAccount{
		ObjectMeta:       metav1.ObjectMeta{Name: "strict", Annotations: map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}},
		Secrets:          []corev1.ObjectReference{{Name: "ok"}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "okpull"}},
	})
	secretEnv := func(secret string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "k"}}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.PodSpec)
		want   string // "" admitted
	}{
		{"allowed", func(s *corev1.PodSpec) { s.Containers[0].Env = secretEnv("ok") }, ""},
		{"volume", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "bad"}}}}
		}, `volume with secret.secretName="bad" is not allowed because service account strict does not reference that secret`},
		{"init-env", func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", Env: secretEnv("bad")}}
		}, `init container i with envVar E referencing secret.secretName="bad" is not allowed because service account strict does not reference that secret`},
		{"pull", func(s *corev1.PodSpec) {
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "okpull"}, {Name: "bad"}}
		},
			`imagePullSecrets[1].name="bad" is not allowed because service account strict does not reference that imagePullSecret`},
	} {
		pod := podOf(tc.name, "c")
		pod.Spec.ServiceAccountName = "strict"
		tc.change(&pod.Spec)
		_, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
		if tc.want == "" && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		} else if tc.want != "" {
			if s := statusOf(t, err); s.Code != http.StatusForbidden || s.Message != `pods "`+tc.name+`" is forbidden: `+tc.want {
				t.Errorf("%s: %+v", tc.name, s)
			}
		}
	}
	pod, err := cs.CoreV1().Pods(ns).Get(ctx(t), "allowed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", Env: secretEnv("bad")}}}
	_, err = cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx(t), "allowed", pod, metav1.UpdateOptions{})
	want := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: `ephemeral container debug with envVar E referencing secret.secretName="bad" is not allowed because service account strict does not reference that secret`}
	if diff := cmp.Diff(want, statusOf(t, err), ignoreTypeMeta); diff != "" {
		t.Errorf("an ephemeral container's secret (-kube's +got):\n%s", diff)
	}
}

// TestServiceAccountDisabled: with --disable-admission-plugins=ServiceAccount
// (as envtest starts kube-apiserver) a pod is stored as sent: no
// account, no credentials, and its account need not exist.
func TestServiceAccountDisabled(t *testing.T) {
	if *reference {
		t.Skip("starts a server of its own")
	}
	t.Parallel()
	ts := testserver.Start(t, func(o *app.Options) { o.Admission.DisablePlugins = []string{"ServiceAccount"} })
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ns := ts.CreateNamespace(t)
	sent := podOf("plain", "c")
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), sent, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "" || len(got.Spec.Volumes) > 0 || len(got.Spec.Containers[0].VolumeMounts) > 0 || len(got.Spec.ImagePullSecrets) > 0 {
		data, _ := json.Marshal(got.Spec)
		t.Errorf("the pod was changed: %s", data)
	}
	sent = podOf("missing", "c")
	sent.Spec.ServiceAccountName = "missing"
	if _, err := cs.CoreV1().Pods(ns).Create(ctx(t), sent, metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod of an account that does not exist: %v", err)
	}
}
