package generic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// A resource stored at autoscaling/v2 and served at v1 too, over a real
// etcd and watch cache.

type optionsGetter struct{ factory storage.Factory }

func (g optionsGetter) GetRESTOptions(gr schema.GroupResource) (generic.RESTOptions, error) {
	return generic.RESTOptions{StorageFactory: g.factory, Decorator: cacher.StorageWithCacher(cacher.Config{}), ResourcePrefix: "/registry/" + gr.Resource}, nil
}

var v1Kind = autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")

func newVersionedHPAs(t *testing.T) (*generic.Store, *generic.VersionedStore) {
	t.Helper()
	etcd := etcdtest.Start(t)
	r := generic.Resource{
		Name: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler", Kind: "HorizontalPodAutoscaler", Namespaced: true,
		New:      func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		NewList:  func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		Versions: []generic.Version{hpaV1},
	}
	info, err := generic.BuildGroup(autoscalingv2.SchemeGroupVersion, optionsGetter{etcd3.NewFactory(etcd.Client)}, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	if got := info.PrioritizedVersions; len(got) != 2 || got[0] != "v2" || got[1] != "v1" {
		t.Fatalf("versions: got %v, want [v2 v1]", got)
	}
	store := info.VersionedResourcesStorageMap["v2"]["horizontalpodautoscalers"].(*generic.Store)
	view := info.VersionedResourcesStorageMap["v1"]["horizontalpodautoscalers"].(*generic.VersionedStore)
	deadline := time.Now().Add(10 * time.Second)
	for store.StorageReadiness() != nil {
		if time.Now().After(deadline) {
			t.Fatal("watch cache not ready in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return store, view
}

var hpaV1 = generic.Version{
	Kind:    v1Kind,
	New:     func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
	NewList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
	Defaults: func(obj runtime.Object) {
		if h := obj.(*autoscalingv1.HorizontalPodAutoscaler); h.Spec.MinReplicas == nil {
			h.Spec.MinReplicas = ptr.To[int32](1)
		}
	},
	Converter: conversion.Builtin(),
	FieldLabelConversion: func(label, value string) (string, string, error) {
		if label != "metadata.name" {
			return "", "", fmt.Errorf("field label not supported at v1: %s", label)
		}
		return label, value, nil
	},
}

func hpa(name string, maxReplicas int32) *autoscalingv1.HorizontalPodAutoscaler {
	return &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: maxReplicas,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "d", APIVersion: "apps/v1"}},
	}
}

func TestVersionedStoreWrites(t *testing.T) {
	t.Parallel()
	store, view := newVersionedHPAs(t)
	ctx := request.WithNamespace(context.Background(), "ns")

	// Admission sees the served version.
	var admitted []runtime.Object
	admit := func(_ context.Context, obj runtime.Object) error { admitted = append(admitted, obj); return nil }
	in := hpa("a", 3)
	view.Default(in)
	if in.Spec.TargetCPUUtilizationPercentage != nil || in.Spec.MinReplicas == nil || *in.Spec.MinReplicas != 1 {
		t.Errorf("defaults: got %+v, want v1's minReplicas 1 only (the CPU target comes with the conversion)", in.Spec)
	}
	created, err := view.Create(ctx, hpa("a", 3), admit, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := created.(*autoscalingv1.HorizontalPodAutoscaler); !ok {
		t.Fatalf("create returned %T, want a v1 object", created)
	}
	if len(admitted) != 1 {
		t.Fatalf("admission ran %d times", len(admitted))
	}
	if _, ok := admitted[0].(*autoscalingv1.HorizontalPodAutoscaler); !ok {
		t.Errorf("admission saw %T, want the served version", admitted[0])
	}
	stored, err := store.Get(ctx, "a", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := stored.(*autoscalingv2.HorizontalPodAutoscaler).Spec.Metrics; len(m) != 1 || *m[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("stored at v2: metrics %+v, want the 80 %% CPU target", m)
	}

	// An update is computed at the served version.
	var sawOld runtime.Object
	updated, created2, err := view.Update(ctx, "a", updateFunc(func(old runtime.Object) (runtime.Object, error) {
		sawOld = old
		h := old.DeepCopyObject().(*autoscalingv1.HorizontalPodAutoscaler)
		h.Spec.MaxReplicas = 7
		h.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](55)
		return h, nil
	}), nil, func(_ context.Context, obj, old runtime.Object) error {
		if _, ok := obj.(*autoscalingv1.HorizontalPodAutoscaler); !ok {
			return fmt.Errorf("update admission saw %T", obj)
		}
		if _, ok := old.(*autoscalingv1.HorizontalPodAutoscaler); !ok {
			return fmt.Errorf("update admission saw an old %T", old)
		}
		return nil
	}, false, &metav1.UpdateOptions{})
	if err != nil || created2 {
		t.Fatalf("update: %v (created %v)", err, created2)
	}
	if _, ok := sawOld.(*autoscalingv1.HorizontalPodAutoscaler); !ok {
		t.Errorf("the update saw the current object as %T, want v1", sawOld)
	}
	if got := updated.(*autoscalingv1.HorizontalPodAutoscaler); got.Spec.MaxReplicas != 7 || *got.Spec.TargetCPUUtilizationPercentage != 55 {
		t.Errorf("updated: %+v", got.Spec)
	}
	stored, _ = store.Get(ctx, "a", &metav1.GetOptions{})
	if m := stored.(*autoscalingv2.HorizontalPodAutoscaler).Spec.Metrics; len(m) != 1 || *m[0].Resource.Target.AverageUtilization != 55 {
		t.Errorf("stored after the update: %+v", m)
	}

	// Reads of one stored object at the served version, typed and as JSON.
	obj, err := view.GetObject(ctx, "a", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(obj.AppendJSON(nil, true), &got); err != nil {
		t.Fatal(err)
	}
	if got["apiVersion"] != "autoscaling/v1" || got["spec"].(map[string]any)["targetCPUUtilizationPercentage"] != 55.0 {
		t.Errorf("GetObject: %s", obj.AppendJSON(nil, true))
	}
	if rv := got["metadata"].(map[string]any)["resourceVersion"]; rv != updated.(*autoscalingv1.HorizontalPodAutoscaler).ResourceVersion {
		t.Errorf("GetObject resourceVersion %v, want the stored one", rv)
	}

	// Deletes: the collection comes back at the served version; errors
	// name the served group.
	if _, err := view.Create(ctx, hpa("b", 2), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := view.DeleteCollection(ctx, nil, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if items := list.(*autoscalingv1.HorizontalPodAutoscalerList).Items; len(items) != 2 || items[0].Spec.TargetCPUUtilizationPercentage == nil {
		t.Errorf("deleted: %+v", items)
	}
	_, err = view.Get(ctx, "a", &metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}

type updateFunc func(old runtime.Object) (runtime.Object, error)

func (updateFunc) Preconditions() *metav1.Preconditions { return nil }
func (f updateFunc) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	return f(old)
}

var _ rest.UpdatedObjectInfo = updateFunc(nil)

// Lists and watches hand up JSON at the served version; watchers of one
// version share one conversion of each event, the storage version's
// watchers get the stored bytes.
func TestVersionedStoreListWatch(t *testing.T) {
	t.Parallel()
	store, view := newVersionedHPAs(t)
	ctx := request.WithNamespace(context.Background(), "ns")
	if _, err := view.Create(ctx, hpa("a", 3), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	res, err := view.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "a")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || apiVersionOf(t, res.Items[0]) != "autoscaling/v1" {
		t.Fatalf("list: %d items", len(res.Items))
	}
	_, err = view.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.namespace", "ns")})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported at v1: metadata.namespace" {
		t.Errorf("a field the version does not select on: got %v", err)
	}

	opts := func() *metainternalversion.ListOptions {
		return &metainternalversion.ListOptions{ResourceVersion: strconv.FormatInt(res.ResourceVersion, 10)}
	}
	w1, err := view.Watch(ctx, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := view.Watch(ctx, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	w3, err := store.Watch(ctx, opts())
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Stop()
	if _, ok := w1.(storage.Puller); !ok {
		t.Errorf("a versioned watch over the watch cache is not a Puller")
	}
	if _, err := view.Create(ctx, hpa("b", 4), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	timeout, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	e1, st1 := storage.NextEvent(timeout, w1, true)
	e2 := <-w2.ResultChan()
	e3, st3 := storage.NextEvent(timeout, w3, true)
	if st1 != storage.Got || st3 != storage.Got || e1.Type != watch.Added || e2.Type != watch.Added || e3.Type != watch.Added {
		t.Fatalf("events: %v %v %v", e1.Type, e2.Type, e3.Type)
	}
	if apiVersionOf(t, e1.Object) != "autoscaling/v1" || apiVersionOf(t, e3.Object) != "autoscaling/v2" {
		t.Errorf("event versions: %s, %s", apiVersionOf(t, e1.Object), apiVersionOf(t, e3.Object))
	}
	if e1.Object != e2.Object {
		t.Errorf("two watchers of one version got two conversions of one event")
	}
	if e1.Object.ResourceVersion != e3.Object.ResourceVersion {
		t.Errorf("revisions: %d, %d", e1.Object.ResourceVersion, e3.Object.ResourceVersion)
	}
	w2.Stop()
	for range w2.ResultChan() {
		// drained: the channel closes once the watch stops
	}
}

func apiVersionOf(t *testing.T, o *storage.Object) string {
	t.Helper()
	var tm metav1.TypeMeta
	if err := json.Unmarshal(o.AppendJSON(nil, true), &tm); err != nil {
		t.Fatal(err)
	}
	return tm.APIVersion
}

// A strategy of the version replaces the Store's for writes at it; errors
// name the resource as the Store does (the group is the same here).
func TestVersionedStoreStrategy(t *testing.T) {
	t.Parallel()
	store, _ := newVersionedHPAs(t)
	strict := hpaV1
	strict.Strategy = refuseAll{generic.BaseStrategy{Namespaced: true}}
	view, err := generic.NewVersionedStore(store, strict)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithNamespace(context.Background(), "ns")
	_, err = view.Create(ctx, hpa("a", 1), nil, &metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `HorizontalPodAutoscaler.autoscaling "a" is invalid: spec: Forbidden: never` {
		t.Fatalf("create through a refusing strategy: %v", err)
	}
	_, err = view.Get(ctx, "missing", &metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `horizontalpodautoscalers.autoscaling "missing" not found` {
		t.Errorf("not found: %v", err)
	}
	if _, err := store.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, nil, &metav1.CreateOptions{}); err != nil {
		t.Errorf("the Store keeps its own strategy: %v", err)
	}
	strict.Strategy = refuseAll{generic.BaseStrategy{Namespaced: false}}
	if _, err := generic.NewVersionedStore(store, strict); err == nil {
		t.Error("a strategy of another scope was accepted")
	}
}

type refuseAll struct{ generic.BaseStrategy }

func (refuseAll) Validate(context.Context, runtime.Object) field.ErrorList {
	return field.ErrorList{field.Forbidden(field.NewPath("spec"), "never")}
}
