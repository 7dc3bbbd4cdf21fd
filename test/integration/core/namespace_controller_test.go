package core

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestNamespaceDeletionFinishes: deleting a namespace removes what it
// holds and then the namespace, as in a cluster with its namespace
// controller; with --namespace-controller=false it stays Terminating, as
// with kube-apiserver alone.
func TestNamespaceDeletionFinishes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		controller bool
	}{
		{"with the namespace controller", true},
		{"without", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testserver.Start(t, func(o *app.Options) { o.NamespaceController = tc.controller })
			client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
			ctx := context.Background()
			if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.CoreV1().ConfigMaps("gone").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := client.CoreV1().Namespaces().Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				ns, err := client.CoreV1().Namespaces().Get(ctx, "gone", metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					if !tc.controller {
						t.Fatal("the namespace went away without a namespace controller")
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ns.Status.Phase != corev1.NamespaceTerminating {
					t.Fatalf("phase %s, want Terminating", ns.Status.Phase)
				}
				if !tc.controller && time.Now().After(deadline.Add(-17*time.Second)) {
					return // still Terminating, as kube-apiserver alone leaves it
				}
				if time.Now().After(deadline) {
					t.Fatal("the namespace is still there")
				}
				time.Sleep(50 * time.Millisecond)
			}
			list, err := client.CoreV1().ConfigMaps("gone").List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 0 {
				t.Fatalf("content of the deleted namespace: %v %v", err, list)
			}
		})
	}
}

// TestNamespaceDeletionConditions: a namespace whose content waits for a
// finalizer says so in its conditions, in kube's words, and goes once the
// finalizer is removed.
func TestNamespaceDeletionConditions(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Finalizers: []string{"example.com/keep"}}}
	if _, err := client.CoreV1().ConfigMaps("kept").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, "kept", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances"
	waitNamespace(t, client, "kept", func(ns *corev1.Namespace) bool {
		for _, c := range ns.Status.Conditions {
			if c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue && c.Message == want {
				return true
			}
		}
		return false
	})
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := client.CoreV1().ConfigMaps("kept").Patch(ctx, "c", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamespace(t, client, "kept", nil)
}

// waitNamespace waits until done(ns) holds, or (done nil) the namespace is
// gone.
func waitNamespace(t *testing.T, client kubernetes.Interface, name string, done func(*corev1.Namespace) bool) {
	t.Helper()
	var ns *corev1.Namespace
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		ns, err = client.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && done == nil {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if done != nil && done(ns) {
			return
		}
	}
	t.Fatalf("namespace %s: not as expected within 20s: %+v", name, ns.Status)
}
