package crd

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// TestAPIServicesOfServedVersions checks that, as kube-apiserver's
// crdregistration controller does, every served version of a definition
// gets a Local APIService (automanaged, priorities 1000/100, Available),
// an unserved one none, and that they follow the definition: a version
// served later gets one, and they go when no definition serves them.
func TestAPIServicesOfServedVersions(t *testing.T) {
	t.Parallel()
	g := group(t)
	crd := createEstablished(t, widgetCRD(g, func(crd *apiextensionsv1.CustomResourceDefinition) {
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Served, v2.Storage = "v2", false, false
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
	}))

	s := waitForAPIService(t, "v1."+g, true)
	if got := s.GetLabels()["kube-aggregator.kubernetes.io/automanaged"]; got != "true" {
		t.Errorf("automanaged label: got %q, want \"true\"", got)
	}
	spec, _, _ := unstructured.NestedMap(s.Object, "spec")
	want := map[string]interface{}{"group": g, "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(100)}
	for k, v := range want {
		if spec[k] != v {
			t.Errorf("spec.%s: got %v, want %v", k, spec[k], v)
		}
	}
	if spec["service"] != nil {
		t.Errorf("spec.service: got %v, want none (Local)", spec["service"])
	}
	waitFor(t, "v1."+g+" Available", func() bool {
		s, err := dyn(t).Resource(apiServices).Get(ctx(t), "v1."+g, metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(s.Object, "status", "conditions")
		for _, c := range conds {
			c := c.(map[string]interface{})
			if c["type"] == "Available" && c["status"] == "True" && c["reason"] == "Local" {
				return true
			}
		}
		return false
	})
	// v2 is not served: no APIService, as long as the first one exists.
	if _, err := dyn(t).Resource(apiServices).Get(ctx(t), "v2."+g, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("v2.%s of an unserved version: got %v, want NotFound", g, err)
	}

	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	err := wait.PollUntilContextTimeout(ctx(t), 10*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		cur, err := crds.Get(c, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cur.Spec.Versions[1].Served = true
		_, err = crds.Update(c, cur, metav1.UpdateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("serving v2: %v", err)
	}
	waitForAPIService(t, "v2."+g, true)

	if err := crds.Delete(ctx(t), crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForAPIService(t, "v1."+g, false)
	waitForAPIService(t, "v2."+g, false)
}

// waitForAPIService waits until the APIService name exists (or, when
// exists is false, is gone), and returns it.
func waitForAPIService(t *testing.T, name string, exists bool) *unstructured.Unstructured {
	t.Helper()
	var s *unstructured.Unstructured
	waitFor(t, name, func() bool {
		var err error
		s, err = dyn(t).Resource(apiServices).Get(ctx(t), name, metav1.GetOptions{})
		if exists {
			return err == nil
		}
		return apierrors.IsNotFound(err)
	})
	return s
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx(t), 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
