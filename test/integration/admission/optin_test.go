package admission

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// The plugins kube runs only when asked are tested on servers of the
// tests' own that enable them. With -reference, start the peer with
// KUBE_EXTRA_ARGS=--enable-admission-plugins=AlwaysPullImages,DenyServiceExternalIPs,OwnerReferencesPermissionEnforcement
// and the tests of optInPlugins run against it.
var optInPlugins = []string{"AlwaysPullImages", "DenyServiceExternalIPs", "OwnerReferencesPermissionEnforcement"}

// optInServer reaches, as its administrator, a server of the test's own
// running plugins beside the default ones (the peer with -reference),
// and a namespace of the test's in it.
func optInServer(t *testing.T, plugins ...string) (*rest.Config, string) {
	t.Helper()
	if *reference {
		return config(), namespace(t)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Admission.EnablePlugins = plugins })
	return ts.ClientConfig, ts.CreateNamespace(t)
}

// wantStatus fails t unless err is a Status of code and message.
func wantStatus(t *testing.T, what string, err error, code int32, message string) {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("%s: want a %d Status %q, got %v", what, code, message, err)
	}
	if s := status.Status(); s.Code != code || s.Message != message {
		t.Errorf("%s: got %d %q, want %d %q", what, s.Code, s.Message, code, message)
	}
}

// TestAlwaysPullImages: every container of a new pod, init and regular,
// pulls always, whatever the pod asked; an update that brings no new
// image is left alone.
func TestAlwaysPullImages(t *testing.T) {
	t.Parallel()
	cfg, ns := optInServer(t, optInPlugins...)
	cs := kubernetes.NewForConfigOrDie(cfg)
	createAccount(t, cs, ns, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	pod := podOf("pull", "a", "b")
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	pod.Spec.Containers[1].ImagePullPolicy = corev1.PullIfNotPresent
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent}}
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(got.Spec.InitContainers, got.Spec.Containers...) {
		if c.ImagePullPolicy != corev1.PullAlways {
			t.Errorf("container %s pulls %q, want Always", c.Name, c.ImagePullPolicy)
		}
	}
	got.Labels = map[string]string{"changed": "yes"}
	if _, err := cs.CoreV1().Pods(ns).Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Errorf("an update without a new image: %v", err)
	}
	got.Spec.Containers[0].Image = "busybox:1.37"
	got.ResourceVersion = ""
	updated, err := cs.CoreV1().Pods(ns).Update(ctx(t), got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("an update with a new image: %v", err)
	}
	if p := updated.Spec.Containers[0].ImagePullPolicy; p != corev1.PullAlways {
		t.Errorf("after a new image, container a pulls %q", p)
	}
}

// TestDenyServiceExternalIPs: a service may not take external IPs, on
// create or update; services without them are untouched.
func TestDenyServiceExternalIPs(t *testing.T) {
	t.Parallel()
	cfg, ns := optInServer(t, optInPlugins...)
	cs := kubernetes.NewForConfigOrDie(cfg)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Port: 80}}, ExternalIPs: []string{"192.0.2.10"}}}
	_, err := cs.CoreV1().Services(ns).Create(ctx(t), svc, metav1.CreateOptions{})
	wantStatus(t, "create with an external IP", err, http.StatusForbidden,
		`services "web" is forbidden: Use of external IPs is denied by admission control`)
	svc.Spec.ExternalIPs = nil
	created, err := cs.CoreV1().Services(ns).Create(ctx(t), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Spec.ExternalIPs = []string{"192.0.2.11"}
	_, err = cs.CoreV1().Services(ns).Update(ctx(t), created, metav1.UpdateOptions{})
	wantStatus(t, "update adding an external IP", err, http.StatusForbidden,
		`services "web" is forbidden: Use of external IPs is denied by admission control`)
}

// TestOwnerReferencesPermissionEnforcement: changing an object's owner
// references takes delete on it (not on its create); a reference that
// blocks its owner's deletion takes update on the owner's finalizers,
// found by the reference's kind; an unknown kind is refused.
func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	t.Parallel()
	cfg, ns := optInServer(t, optInPlugins...)
	admin := kubernetes.NewForConfigOrDie(cfg)
	owner, err := admin.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := "owner-refs-" + ns
	cs, grant := impersonatingOn(t, cfg, user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
		Verbs: []string{"get", "create", "update"}})
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{ref}}}
	var created *corev1.ConfigMap
	// The user's role reaches the authorizer's cache a moment after it
	// is written.
	eventually(t, func(int) (err error) {
		created, err = cs.CoreV1().ConfigMaps(ns).Create(ctx(t), dependent, metav1.CreateOptions{})
		if err != nil && !apierrors.IsForbidden(err) {
			t.Fatalf("creating with a reference takes no right: %v", err)
		}
		return err
	})
	created.OwnerReferences = nil
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx(t), created, metav1.UpdateOptions{})
	wantStatus(t, "dropping a reference without delete", err, http.StatusForbidden,
		`configmaps "dependent" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`)
	created.Data = map[string]string{"k": "v"}
	created.OwnerReferences = []metav1.OwnerReference{ref}
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx(t), created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("an update keeping the references: %v", err)
	}

	blocking := ref
	blocking.BlockOwnerDeletion = ptr.To(true)
	dependent = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "blocking", OwnerReferences: []metav1.OwnerReference{blocking}}}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx(t), dependent, metav1.CreateOptions{})
	wantStatus(t, "blocking without the owner's finalizers", err, http.StatusForbidden,
		`configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`)
	unknown := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Nope", Name: "x", UID: types.UID("u"), BlockOwnerDeletion: ptr.To(true)}
	dependent.OwnerReferences = []metav1.OwnerReference{unknown}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx(t), dependent, metav1.CreateOptions{})
	wantStatus(t, "blocking an unknown kind", err, http.StatusForbidden,
		`configmaps "blocking" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Nope: no matches for kind "Nope" in version "example.com/v1"`)

	grant(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps/finalizers"}, Verbs: []string{"update"}})
	dependent.OwnerReferences = []metav1.OwnerReference{blocking}
	eventually(t, func(int) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), dependent, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
}
