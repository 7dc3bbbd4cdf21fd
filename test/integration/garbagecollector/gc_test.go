// Package garbagecollector tests the in-process garbage collector
// (--garbage-collector) through the HTTP API: what becomes of dependents
// when their owners are deleted in the background, in the foreground or
// orphaning them, and of references to owners that are gone.
package garbagecollector

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/garbagecollector"
)

var (
	client kubernetes.Interface
	gc     *garbagecollector.Controller
)

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) {
		client = kubernetes.NewForConfigOrDie(ts.ClientConfig)
		gc = ts.Server.GarbageCollector
	}, func(o *app.Options) { o.GarbageCollector = true })
}

// holdFinalizer keeps a dependent from going until the test removes it.
const holdFinalizer = "test.miniapiserver.io/hold"

func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// ownerAndDependent creates a ConfigMap and a Secret it controls
// (blockOwnerDeletion, as controllers set it), with the given finalizers.
func ownerAndDependent(t *testing.T, ns string, finalizers ...string) (*corev1.ConfigMap, *corev1.Secret) {
	t.Helper()
	ctx := context.Background()
	owner, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent", Finalizers: finalizers,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The collector follows each resource with its own watch: an owner
	// deleted before the dependent's event arrives would look childless
	// (kube's integration tests wait the same way).
	eventually(t, func() error {
		if !gc.GraphHasUID(owner.UID, dep.UID) {
			return fmt.Errorf("the collector has not seen the owner and the dependent yet")
		}
		return nil
	})
	return owner, dep
}

// eventually polls check until it returns nil, for at most 30 s.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func gone(err error, what string) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("%s still there (%v)", what, err)
}

// TestBackground: the dependent of an owner deleted in the background
// (ConfigMaps' default) is deleted after it.
func TestBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	ownerAndDependent(t, ns)
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err := client.CoreV1().Secrets(ns).Get(ctx, "dependent", metav1.GetOptions{})
		return gone(err, "the dependent")
	})
}

// TestForeground: an owner deleted in the foreground stays, with its
// foregroundDeletion finalizer, while a dependent that blocks it is still
// there (here held by a finalizer of its own after the collector deleted
// it), and goes once the dependent has.
func TestForeground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	ownerAndDependent(t, ns, holdFinalizer)
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		dep, err := client.CoreV1().Secrets(ns).Get(ctx, "dependent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if dep.DeletionTimestamp == nil {
			return fmt.Errorf("the dependent is not being deleted")
		}
		return nil
	})
	owner, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the owner went before its blocking dependent: %v", err)
	}
	if owner.DeletionTimestamp == nil || !slices.Contains(owner.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("owner: deletionTimestamp %v, finalizers %v; want it deleted with %s", owner.DeletionTimestamp, owner.Finalizers, metav1.FinalizerDeleteDependents)
	}
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := client.CoreV1().Secrets(ns).Patch(ctx, "dependent", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
		return gone(err, "the owner")
	})
}

// TestOrphan: an owner deleted orphaning its dependents goes; the
// dependent stays, without the reference to it.
func TestOrphan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	ownerAndDependent(t, ns)
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
		return gone(err, "the owner")
	})
	dep, err := client.CoreV1().Secrets(ns).Get(ctx, "dependent", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the orphaned dependent: %v", err)
	}
	if len(dep.OwnerReferences) != 0 {
		t.Errorf("the orphaned dependent still has owners %v", dep.OwnerReferences)
	}
}

// TestDanglingReferences: an object whose only owner never existed is
// deleted; one that also names an owner of a kind nothing serves is kept
// (the collector cannot tell that owner is gone), and only the reference
// to the missing owner is dropped.
func TestDanglingReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	missing := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "never", UID: "00000000-0000-0000-0000-000000000001"}
	unknown := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Unserved", Name: "x", UID: "00000000-0000-0000-0000-000000000002"}
	for name, refs := range map[string][]metav1.OwnerReference{"orphan": {missing}, "kept": {missing, unknown}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: refs}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, func() error {
		_, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "orphan", metav1.GetOptions{})
		return gone(err, "the object whose owner never existed")
	})
	eventually(t, func() error {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != unknown.UID {
			return fmt.Errorf("owner references %v, want only the one to the unserved kind", cm.OwnerReferences)
		}
		return nil
	})
}

// TestOwnerNotSeenYet: each resource is followed by its own watch, so the
// collector may see a dependent before its owner; it must look the owner
// up rather than take it for gone. Many pairs, created without waiting,
// make that order likely; none of their dependents may be deleted.
func TestOwnerNotSeenYet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	const pairs = 60
	var uids []types.UID
	for i := range pairs {
		owner, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("owner-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dep, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Name:            fmt.Sprintf("dependent-%d", i),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids = append(uids, owner.UID, dep.UID)
	}
	eventually(t, func() error {
		if !gc.GraphHasUID(uids...) {
			return fmt.Errorf("the collector has not seen every owner and dependent yet (or deleted a dependent whose owner exists)")
		}
		return nil
	})
	// One more pair after all: once it is in the graph, the collector has
	// processed what the earlier events queued.
	ownerAndDependent(t, ns)
	list, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != pairs+1 {
		t.Errorf("%d dependents left of %d, all of whose owners exist", len(list.Items), pairs+1)
	}
}
