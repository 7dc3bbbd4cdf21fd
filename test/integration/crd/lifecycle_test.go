package crd

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// TestDeleteDefinition: deleting a definition first deletes its custom
// resources (the customresourcecleanup finalizer): meanwhile it is
// Terminating, creates are refused in kube's words and discovery lists
// fewer verbs; an instance held by a finalizer of its own holds the
// definition; once the last instance is gone the definition goes, and
// its routes and discovery with it.
func TestDeleteDefinition(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	nsA, nsB := namespace(t), namespace(t)
	for i, ns := range []string{nsA, nsB} {
		w := widget(t, gvr, fmt.Sprintf("w%d", i), "{color: red}")
		if i == 1 {
			w.SetFinalizers([]string{"example.com/hold"})
		}
		if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(ctx(t), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	name := "widgets." + gvr.Group
	if err := crds.Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	crd := waitForCRD(t, name, "deleting its instances", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		_, reason, _ := condition(c, apiextensionsv1.Terminating)
		return reason == "InstanceDeletionInProgress"
	})
	if crd.DeletionTimestamp == nil || len(crd.Finalizers) != 1 || crd.Finalizers[0] != apiextensionsv1.CustomResourceCleanupFinalizer {
		t.Errorf("terminating definition: deletionTimestamp %v, finalizers %v", crd.DeletionTimestamp, crd.Finalizers)
	}
	err := pollUntil(t, func() bool {
		_, err := dyn(t).Resource(gvr).Namespace(nsA).Get(ctx(t), "w0", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err != nil {
		t.Fatalf("the instance without finalizers: %v", err)
	}
	_, err = dyn(t).Resource(gvr).Namespace(nsA).Create(ctx(t), widget(t, gvr, "w9", "{color: red}"), metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) || err.Error() != "create not allowed while custom resource definition is terminating" {
		t.Errorf("create while terminating: %v", err)
	}
	code, body := do(t, http.MethodGet, "/apis/"+gvr.GroupVersion().String(), "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"verbs":["delete","deletecollection","get","list","watch"]`) {
		t.Errorf("discovery while terminating: %d %s", code, body)
	}
	// The collection's deletes run side by side: w0 gone says nothing of
	// whether w1's deletion has been recorded yet.
	err = pollUntil(t, func() bool {
		held, err := dyn(t).Resource(gvr).Namespace(nsB).Get(ctx(t), "w1", metav1.GetOptions{})
		return err == nil && held.GetDeletionTimestamp() != nil
	})
	if err != nil {
		t.Fatalf("the held instance is not marked for deletion: %v", err)
	}
	if _, err := crds.Get(ctx(t), name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the definition went while an instance remains: %v", err)
	}
	if _, err := dyn(t).Resource(gvr).Namespace(nsB).Patch(ctx(t), "w1", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = pollUntil(t, func() bool {
		_, err := crds.Get(ctx(t), name, metav1.GetOptions{})
		code, _ := do(t, http.MethodGet, "/apis/"+gvr.GroupVersion().String()+"/widgets", "", nil)
		return apierrors.IsNotFound(err) && code == http.StatusNotFound
	})
	if err != nil {
		t.Errorf("the definition and its routes after the last instance went: %v", err)
	}
}

// TestUpdateDefinition: what a definition serves follows its updates: a
// version added is served, printer columns change, a version withdrawn
// is not served any more.
func TestUpdateDefinition(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(ctx(t), widget(t, gvr, "w1", "{color: red}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd := waitForCRD(t, "widgets."+gvr.Group, "established", established)
	twoVersions(crd)
	crd.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Paint", Type: "string", JSONPath: ".spec.color"}}
	if _, err := crds.Update(ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	beta := gvr
	beta.Version = "v1beta1"
	tablePath := fmt.Sprintf("/apis/%s/namespaces/%s/widgets", gvr.GroupVersion(), ns)
	err := pollUntil(t, func() bool {
		_, err := dyn(t).Resource(beta).Namespace(ns).Get(ctx(t), "w1", metav1.GetOptions{})
		_, body := do(t, http.MethodGet, tablePath, "", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		return err == nil && strings.Contains(string(body), `"name":"Paint"`)
	})
	if err != nil {
		t.Fatalf("the version and column added: %v", err)
	}
	crd = waitForCRD(t, crd.Name, "synced", func(c *apiextensionsv1.CustomResourceDefinition) bool { return len(c.Spec.Versions) == 2 })
	crd.Spec.Versions[1].Served = false
	if _, err := crds.Update(ctx(t), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = pollUntil(t, func() bool {
		_, err := dyn(t).Resource(beta).Namespace(ns).Get(ctx(t), "w1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err != nil {
		t.Errorf("the version no longer served: %v", err)
	}
}
