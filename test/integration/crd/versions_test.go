package crd

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// twoVersions makes crd serve v1beta1 beside v1 (the storage version),
// with the same schema but for a field only v1beta1 has.
func twoVersions(crd *apiextensionsv1.CustomResourceDefinition) {
	beta := *crd.Spec.Versions[0].DeepCopy()
	beta.Name, beta.Storage, beta.SelectableFields = "v1beta1", false, nil
	spec := beta.Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["betaOnly"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	beta.Schema.OpenAPIV3Schema.Properties["spec"] = spec
	crd.Spec.Versions = append(crd.Spec.Versions, beta)
}

// TestConversionNone: with conversion None the versions share every
// object under another apiVersion, each pruned to its own schema; lists
// and watches at either version see the same objects; a new storage
// version is recorded in storedVersions and objects stored at the old
// one still read at both.
func TestConversionNone(t *testing.T) {
	t.Parallel()
	crd := crdFromFile(t, "widgets.yaml", group(t))
	twoVersions(crd)
	crd = createEstablished(t, crd)
	ns := namespace(t)
	v1 := schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "widgets"}
	beta := v1
	beta.Version = "v1beta1"
	betaClient := dyn(t).Resource(beta).Namespace(ns)
	w := widget(t, beta, "w1", "{color: red, betaOnly: x}")
	created, err := betaClient.Create(ctx(t), w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetAPIVersion() != beta.GroupVersion().String() {
		t.Errorf("created at v1beta1, answered as %s", created.GetAPIVersion())
	}
	// betaOnly is not in v1's schema: storing at v1 drops it.
	if _, found, _ := unstructured.NestedString(created.Object, "spec", "betaOnly"); found {
		t.Errorf("spec.betaOnly survived storage at v1: %v", created.Object["spec"])
	}
	watcher, err := betaClient.Watch(ctx(t), metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	got, err := dyn(t).Resource(v1).Namespace(ns).Get(ctx(t), "w1", metav1.GetOptions{})
	if err != nil || got.GetAPIVersion() != v1.GroupVersion().String() || got.GetUID() != created.GetUID() {
		t.Fatalf("GET at v1: %v %v", got, err)
	}
	got.SetLabels(map[string]string{"via": "v1"})
	if _, err := dyn(t).Resource(v1).Namespace(ns).Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-watcher.ResultChan():
		u := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Modified || u.GetAPIVersion() != beta.GroupVersion().String() || u.GetLabels()["via"] != "v1" {
			t.Errorf("watch at v1beta1: %s %s %v", ev.Type, u.GetAPIVersion(), u.GetLabels())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no event at v1beta1")
	}
	list, err := betaClient.List(ctx(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetAPIVersion() != beta.GroupVersion().String() || list.GetKind() != "WidgetList" {
		t.Fatalf("list at v1beta1: %+v %v", list, err)
	}

	// v1beta1 becomes the storage version.
	crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	cur := waitForCRD(t, crd.Name, "established", established)
	cur.Spec.Versions[0].Storage, cur.Spec.Versions[1].Storage = false, true
	updated, err := crds.Update(ctx(t), cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := updated.Status.StoredVersions; len(got) != 2 || got[0] != "v1" || got[1] != "v1beta1" {
		t.Errorf("storedVersions %v, want [v1 v1beta1]", got)
	}
	// The new storage version serves from new storage a little later:
	// until then an object may still be stored at v1, without the field.
	var w2 *unstructured.Unstructured
	attempt := 0
	err = pollUntil(t, func() bool {
		attempt++
		w2, err = betaClient.Create(ctx(t), widget(t, beta, fmt.Sprintf("w2-%d", attempt), "{color: blue, betaOnly: kept}"), metav1.CreateOptions{})
		return err == nil && hasField(w2, "betaOnly")
	})
	if err != nil {
		t.Fatalf("creating at the new storage version keeps its field: %v (%v)", w2, err)
	}
	for _, gvr := range []schema.GroupVersionResource{v1, beta} {
		list, err := dyn(t).Resource(gvr).Namespace(ns).List(ctx(t), metav1.ListOptions{})
		if err != nil || len(list.Items) < 2 {
			t.Fatalf("list at %s: %v %v", gvr.Version, list, err)
		}
		for _, item := range list.Items {
			if item.GetAPIVersion() != gvr.GroupVersion().String() {
				t.Errorf("list at %s holds %s", gvr.Version, item.GetAPIVersion())
			}
		}
	}
	if *reference {
		return
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Server.EtcdURL}, TLS: srv.Server.EtcdTLS, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	for name, want := range map[string]string{"w1": "v1", w2.GetName(): "v1beta1"} {
		resp, err := etcd.Get(context.Background(), "/registry/"+crd.Spec.Group+"/widgets/"+ns+"/"+name)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("%s in etcd: %v", name, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(resp.Kvs[0].Value); err != nil || u.GroupVersionKind().Version != want {
			t.Errorf("%s is stored as %s, want %s", name, u.GetAPIVersion(), want)
		}
	}
}

func hasField(u *unstructured.Unstructured, field string) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", field)
	return found
}
