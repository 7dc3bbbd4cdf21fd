package crd

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServedWhenEstablished: once a client sees a definition
// Established, its custom resources are served: the first create
// succeeds, with no retry.
func TestServedWhenEstablished(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for range 5 {
		gvr := widgets(t)
		if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create right after Established: %v", err)
		}
	}
}

// TestNamespaceDeletionDeletesCustomResources: the server's namespace
// controller deletes the custom resources of a namespace being deleted,
// as kube's does.
func TestNamespaceDeletionDeletesCustomResources(t *testing.T) {
	if *reference {
		t.Skip("the reference runs no namespace controller")
	}
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	client := dyn(t).Resource(gvr).Namespace(ns)
	if _, err := client.Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := clientset(t).CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := pollUntil(t, func() bool {
		_, err := clientset(t).CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err != nil {
		t.Fatalf("namespace %s still there: %v", ns, err)
	}
	if _, err := client.Get(ctx(t), "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the custom resource of a deleted namespace: %v", err)
	}
}

// TestRoutesUnderChurn: while definitions of other groups come and go,
// built-in resources and an established custom resource are served
// without a miss (the routes of custom resources are swapped, never
// rebuilt in place; run with -race).
func TestRoutesUnderChurn(t *testing.T) {
	if *reference {
		t.Skip("measures this server's routing")
	}
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	var firstFailure atomic.Value
	for _, path := range []string{
		fmt.Sprintf("/apis/%s/namespaces/%s/widgets/w1", gvr.GroupVersion(), ns),
		fmt.Sprintf("/api/v1/namespaces/%s/configmaps", ns),
		"/apis/" + gvr.GroupVersion().String(),
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.Err() == nil {
				code, body := do(t, http.MethodGet, path, "", nil)
				requests.Add(1)
				if code != http.StatusOK {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%s: %d %s", path, code, body))
				}
			}
		}()
	}
	// Definitions come and go in other groups meanwhile.
	base := group(t)
	for i := 0; c.Err() == nil && i < 20; i++ {
		crd := crdFromFile(t, "widgets.yaml", fmt.Sprintf("churn%d-%s", i, base))
		if _, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForCRD(t, crd.Name, "established", established)
		if err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Delete(ctx(t), crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
	if failures.Load() > 0 {
		t.Errorf("%d of %d requests failed; the first: %v", failures.Load(), requests.Load(), firstFailure.Load())
	}
}
