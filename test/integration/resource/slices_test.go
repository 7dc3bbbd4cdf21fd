package resource

import (
	"fmt"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func slice(name, node, driver string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptr.To(node),
			Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{
				Name:       "gpu-0",
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("a100")}},
				Capacity:   map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("40Gi")}},
				Taints:     []resourcev1.DeviceTaint{{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}},
			}},
		},
	}
}

// TestSliceFieldSelectors lists and watches slices by node and driver, as
// the kubelet and a driver's plugin do, and refuses other fields with
// kube's message.
func TestSliceFieldSelectors(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t) // names the cluster-scoped objects of this test
	slices := client(t).ResourceV1().ResourceSlices()
	node1, node2 := ns+"-node-1", ns+"-node-2"
	w, err := slices.Watch(ctx(t), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node2).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, s := range []*resourcev1.ResourceSlice{
		slice(ns+"-a", node1, "gpu.example.com"), slice(ns+"-b", node1, "nic.example.com"), slice(ns+"-c", node2, "gpu.example.com"),
	} {
		created, err := slices.Create(ctx(t), s, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if created.Generation != 1 || created.Spec.Devices[0].Taints[0].TimeAdded == nil {
			t.Errorf("%s: generation %d, taint %+v: want 1 and the time it was added", s.Name, created.Generation, created.Spec.Devices[0].Taints[0])
		}
	}
	for selector, want := range map[string][]string{
		"spec.nodeName=" + node1:                                  {ns + "-a", ns + "-b"},
		"spec.nodeName=" + node1 + ",spec.driver=gpu.example.com": {ns + "-a"},
		"spec.pool.name=" + node2:                                 {ns + "-c"},
		"metadata.name=" + ns + "-b":                              {ns + "-b"},
	} {
		list, err := slices.List(ctx(t), metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			t.Fatalf("%s: %v", selector, err)
		}
		var got []string
		for _, s := range list.Items {
			got = append(got, s.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", selector, got, want)
		}
	}
	select {
	case ev := <-w.ResultChan():
		if s, ok := ev.Object.(*resourcev1.ResourceSlice); ev.Type != watch.Added || !ok || s.Name != ns+"-c" {
			t.Errorf("watch by node: %v %+v", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event for the slice of node-2")
	}
	_, err = slices.List(ctx(t), metav1.ListOptions{FieldSelector: "spec.devices=x"})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.devices" {
		t.Errorf("unknown field: %v", err)
	}
}

// TestSliceUpdate: a slice's generation counts its spec's changes; its
// driver, pool and node never change; a driver name in upper case is
// accepted with kube's warning.
func TestSliceUpdate(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	slices := client(t).ResourceV1().ResourceSlices()
	created, err := slices.Create(ctx(t), slice(ns+"-s", ns+"-n", "gpu.example.com"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Spec.Pool.Generation = 1
	created.Spec.Devices = append(created.Spec.Devices, resourcev1.Device{Name: "gpu-1"})
	updated, err := slices.Update(ctx(t), created, metav1.UpdateOptions{})
	if err != nil || updated.Generation != 2 {
		t.Fatalf("update: %v, generation %d", err, updated.Generation)
	}
	updated.Spec.Driver = "other.example.com"
	_, err = slices.Update(ctx(t), updated, metav1.UpdateOptions{})
	wantInvalid(t, err, "spec.driver", "field is immutable")
}

// TestTaintRules: a rule's taint is added now unless the client says
// when; an update must name the resourceVersion it read (at v1); the
// status endpoint changes only the status.
func TestTaintRules(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	rules := client(t).ResourceV1().DeviceTaintRules()
	rule, err := rules.Create(ctx(t), &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-rule"},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu.example.com")},
			Taint:          resourcev1.DeviceTaint{Key: "example.com/maintenance", Effect: resourcev1.DeviceTaintEffectNoSchedule},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rule.Spec.Taint.TimeAdded == nil || rule.Generation != 1 {
		t.Fatalf("created: %+v", rule)
	}
	added := *rule.Spec.Taint.TimeAdded

	unconditional := rule.DeepCopy()
	unconditional.ResourceVersion = ""
	_, err = rules.Update(ctx(t), unconditional, metav1.UpdateOptions{})
	wantInvalid(t, err, "metadata.resourceVersion", "must be specified for an update")

	rule.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	rule.Spec.Taint.TimeAdded = nil
	rule, err = rules.Update(ctx(t), rule, metav1.UpdateOptions{})
	if err != nil || rule.Generation != 2 || rule.Spec.Taint.TimeAdded == nil || rule.Spec.Taint.TimeAdded.Before(&added) {
		t.Fatalf("new effect: %v %+v", err, rule)
	}

	rule.Status.Conditions = []metav1.Condition{{Type: resourcev1.DeviceTaintConditionEvictionInProgress, Status: metav1.ConditionTrue, Reason: "Evicting", LastTransitionTime: metav1.Now()}}
	rule.Spec.Taint.Value = "ignored"
	withStatus, err := rules.UpdateStatus(ctx(t), rule, metav1.UpdateOptions{})
	if err != nil || len(withStatus.Status.Conditions) != 1 || withStatus.Spec.Taint.Value != "" || withStatus.Generation != 2 {
		t.Fatalf("status: %v %+v", err, withStatus)
	}
}

// TestInformers runs client-go informers of the five kinds, as
// kube-scheduler's DRA plugin and the controller-manager's resourceclaim
// controller do: they list, sync and see a new object of each.
func TestInformers(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	factory := informers.NewSharedInformerFactory(client(t), 0)
	v1 := factory.Resource().V1()
	seen := make(chan string, 16)
	handler := cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if m, err := metaName(obj); err == nil {
			seen <- m
		}
	}}
	for _, inf := range []cache.SharedIndexInformer{v1.DeviceClasses().Informer(), v1.ResourceClaims().Informer(), v1.ResourceClaimTemplates().Informer(), v1.ResourceSlices().Informer(), v1.DeviceTaintRules().Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	for typ, synced := range factory.WaitForCacheSync(stop) {
		if !synced {
			t.Fatalf("%v did not sync", typ)
		}
	}
	cs := client(t).ResourceV1()
	name := ns + "-inf"
	var errs []error
	_, err := cs.DeviceClasses().Create(ctx(t), &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = cs.ResourceClaims(ns).Create(ctx(t), gpuClaim(name), metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = cs.ResourceClaimTemplates(ns).Create(ctx(t), &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: gpuClaim(name).Spec}}, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = cs.ResourceSlices().Create(ctx(t), slice(name, name, "gpu.example.com"), metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = cs.DeviceTaintRules().Create(ctx(t), &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "k", Effect: resourcev1.DeviceTaintEffectNone}}}, metav1.CreateOptions{})
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	deadline := time.After(30 * time.Second)
	for got < 5 {
		select {
		case n := <-seen:
			if n == name {
				got++
			}
		case <-deadline:
			t.Fatalf("informers saw %d of the 5 new objects", got)
		}
	}
}

func metaName(obj any) (string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", fmt.Errorf("%T has no metadata", obj)
	}
	return m.GetName(), nil
}
