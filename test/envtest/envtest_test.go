package envtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// eventually polls check until it returns nil, failing the test with its
// last error after timeout.
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func getWidget(ctx context.Context, c client.Client, namespace, name string) (*unstructured.Unstructured, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	return w, c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, w)
}

// TestReconcile: the manager's reconciler sees a widget created from the
// installed CRD, writes the ConfigMap it controls and the widget's
// status, and follows an update of the spec.
func TestReconcile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	w := newWidget(ns, "one", 3, "green")
	if err := admin.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitReconciled := func(generation int64, size string) {
		t.Helper()
		eventually(t, 30*time.Second, func() error {
			got, err := getWidget(ctx, admin, ns, "one")
			if err != nil {
				return err
			}
			if seen, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration"); seen != generation {
				return fmt.Errorf("status.observedGeneration %d, want %d", seen, generation)
			}
			cm := &corev1.ConfigMap{}
			if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "one-config"}, cm); err != nil {
				return err
			}
			if cm.Data["size"] != size {
				return fmt.Errorf("configmap size %q, want %q", cm.Data["size"], size)
			}
			ref := metav1.GetControllerOf(cm)
			if ref == nil || ref.UID != got.GetUID() || ref.Kind != "Widget" {
				return fmt.Errorf("configmap controller %+v, want the widget %s", ref, got.GetUID())
			}
			return nil
		})
	}
	waitReconciled(1, "3")

	got, err := getWidget(ctx, admin, ns, "one")
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(got.Object, int64(7), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitReconciled(2, "7")
}

// TestWebhooks: envtest's webhooks, served by the manager, are called by
// the server: the mutating one defaults the color, the validating one's
// refusal reaches the client with its message; the CRD's own CEL rule
// is enforced too.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)

	if err := admin.Create(ctx, newWidget(ns, "plain", 1, "")); err != nil {
		t.Fatal(err)
	}
	got, err := getWidget(ctx, admin, ns, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(got.Object, "spec", "color"); color != defaultColor {
		t.Errorf("spec.color %q, want %q set by the mutating webhook", color, defaultColor)
	}

	err = admin.Create(ctx, newWidget(ns, "red", 1, deniedColor))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "red widgets are not allowed") {
		t.Errorf("creating a red widget: %v, want Forbidden by the validating webhook", err)
	}

	err = admin.Create(ctx, newWidget(ns, "huge", 500, "green"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "size must be at most 100") {
		t.Errorf("creating a widget of size 500: %v, want Invalid by the CRD's rule", err)
	}
}

// TestRBAC: a user added with AddUser authenticates with its client
// certificate and may do what a Role bound to it allows, nothing else.
func TestRBAC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	name := "alice-" + ns
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"widget-readers"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := client.New(user.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	widgets := &unstructured.UnstructuredList{}
	widgets.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind("WidgetList"))
	if err := alice.List(ctx, widgets, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Fatalf("listing widgets before any role: %v, want Forbidden", err)
	}

	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget-editor"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{widgetGVK.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "create"},
		}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget-editor"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, func() error { return alice.List(ctx, widgets, client.InNamespace(ns)) })
	if err := alice.Create(ctx, newWidget(ns, "alices", 2, "green")); err != nil {
		t.Errorf("creating a widget as %s: %v", name, err)
	}
	if err := alice.Delete(ctx, newWidget(ns, "alices", 2, "green")); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a widget (not granted): %v, want Forbidden", err)
	}
	cms := &corev1.ConfigMapList{}
	if err := alice.List(ctx, cms, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Errorf("listing configmaps (not granted): %v, want Forbidden", err)
	}
	if err := alice.List(ctx, widgets, client.InNamespace("default")); !apierrors.IsForbidden(err) {
		t.Errorf("listing widgets in another namespace: %v, want Forbidden", err)
	}
}

// TestNamespaceDeletion: a deleted namespace goes away with its
// contents, custom resources included (with the real kube-apiserver,
// envtest's namespaces stay Terminating for ever: no controller-manager
// runs).
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	if err := admin.Create(ctx, newWidget(ns, "doomed", 1, "green")); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		err := admin.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("namespace %s still there (%v)", ns, err)
	})
}

// TestRestart: an environment of its own starts and serves its CRDs; its
// API server restarts on the same etcd and serves the same objects; the
// whole environment stops and starts again, empty.
func TestRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnvironment()
	defer func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	c, err := e.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v", time.Since(start).Round(time.Millisecond))
	cl := mustClient(t, c)
	if err := cl.Create(ctx, newWidget("default", "kept", 1, "green")); err != nil {
		t.Fatal(err)
	}

	apiServer := e.ControlPlane.GetAPIServer()
	if err := apiServer.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Start(); err != nil {
		t.Fatalf("restarting the API server: %v", err)
	}
	// The restarted server has a new serving certificate: a new user
	// trusts it.
	restarted, err := e.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl = mustClient(t, restarted.Config())
	eventually(t, 10*time.Second, func() error {
		_, err := getWidget(ctx, cl, "default", "kept")
		return err
	})

	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	// envtest keeps the CRDs it created, resourceVersion included, and
	// creating them again fails (with kube-apiserver too): a suite that
	// restarts its environment installs them from their files again.
	e.CRDs, e.CRDInstallOptions.CRDs = nil, nil
	if c, err = e.Start(); err != nil {
		t.Fatalf("starting again: %v", err)
	}
	cl = mustClient(t, c)
	if _, err := getWidget(ctx, cl, "default", "kept"); !apierrors.IsNotFound(err) {
		t.Errorf("a widget of the first environment: %v, want NotFound in a new one", err)
	}
	if err := cl.Create(ctx, newWidget("default", "again", 1, "green")); err != nil {
		t.Error(err)
	}
}

func mustClient(t *testing.T, c *rest.Config) client.Client {
	t.Helper()
	cl, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestGarbageCollection: with the server's garbage collector on (see
// TestMain), deleting a widget deletes the ConfigMap it owns, unless the
// deletion orphans its dependents.
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan} {
		name := strings.ToLower(string(policy))
		if err := admin.Create(ctx, newWidget(ns, name, 1, "green")); err != nil {
			t.Fatal(err)
		}
		cmKey := types.NamespacedName{Namespace: ns, Name: name + "-config"}
		eventually(t, 30*time.Second, func() error { return admin.Get(ctx, cmKey, &corev1.ConfigMap{}) })
		if err := admin.Delete(ctx, newWidget(ns, name, 1, ""), client.PropagationPolicy(policy)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, func() error {
			_, err := getWidget(ctx, admin, ns, name)
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: widget still there (%v)", policy, err)
			}
			return nil
		})
		cm := &corev1.ConfigMap{}
		err := admin.Get(ctx, cmKey, cm)
		switch {
		case policy == metav1.DeletePropagationOrphan:
			if err != nil {
				t.Errorf("%s: the orphaned configmap: %v", policy, err)
			} else if len(cm.OwnerReferences) != 0 {
				t.Errorf("%s: the orphaned configmap still has owners %v", policy, cm.OwnerReferences)
			}
		case policy == metav1.DeletePropagationForeground:
			// The owner is gone only once its dependents are.
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s: the widget is gone, its configmap not (%v)", policy, err)
			}
		default:
			eventually(t, 30*time.Second, func() error {
				if err := admin.Get(ctx, cmKey, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
					return errors.Join(fmt.Errorf("%s: configmap still there", policy), err)
				}
				return nil
			})
		}
	}
}
