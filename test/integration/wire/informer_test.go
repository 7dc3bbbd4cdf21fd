package wire

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// informerCase is one resource an informer syncs.
type informerCase struct {
	gvr  schema.GroupVersionResource
	kind string
}

// informerResources are resources of the three groups, namespaced and
// not, with and without a watch cache trigger.
var informerResources = []informerCase{
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap"},
	{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod"},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "Service"},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment"},
	{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "Lease"},
}

// keys is a thread-safe set of the keys an informer's handler saw added.
type keys struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (k *keys) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.seen == nil {
			k.seen = map[string]bool{}
		}
		k.seen[key] = true
	}}
}

func (k *keys) has(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.seen[key]
}

// createFixtures creates one object of each informer resource in ns (from
// the Table fixtures) and returns their names by resource.
func createFixtures(t *testing.T, ns string) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, c := range informerResources {
		names[c.gvr.Resource] = createFixture(t, ns, c.gvr.Resource).GetName()
	}
	return names
}

// checkWatchList checks that the informers of every informer resource
// synced through a WatchList (no LIST), in contentType and compressed.
func checkWatchList(t *testing.T, rec *recorder, ns string, contentType string) {
	t.Helper()
	for _, c := range informerResources {
		path := "/" + c.gvr.Resource + "?"
		watches := rec.find(path, "sendInitialEvents=true", "allowWatchBookmarks=true", "resourceVersionMatch=NotOlderThan")
		lists := rec.find(path)
		if len(watches) == 0 {
			t.Errorf("%s: the informer did not use WatchList: %+v", c.gvr.Resource, lists)
			continue
		}
		for _, e := range lists {
			if !strings.Contains(e.url, "watch=true") {
				t.Errorf("%s: the informer fell back to LIST: %s", c.gvr.Resource, e.url)
			}
		}
		if w := watches[0]; w.code != 200 || w.contentType != contentType || !w.uncompressed {
			t.Errorf("%s: watch %d %q uncompressed=%v, want %q gzip", c.gvr.Resource, w.code, w.contentType, w.uncompressed, contentType)
		}
	}
}

// TestTypedInformersWatchList syncs typed informers (protobuf, WatchList
// mode: client-go 0.37's default) for several resources, then sees a new
// object arrive through the watch.
func TestTypedInformersWatchList(t *testing.T) {
	ns := namespace(t)
	names := createFixtures(t, ns)
	cfg, rec := recordedConfig()
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace(ns))
	seen := map[string]*keys{}
	for _, c := range informerResources {
		inf, err := factory.ForResource(c.gvr)
		if err != nil {
			t.Fatal(err)
		}
		seen[c.gvr.Resource] = &keys{}
		inf.Informer().AddEventHandler(seen[c.gvr.Resource].handler())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	for gvr, synced := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !synced {
			t.Fatalf("%v did not sync", gvr)
		}
	}
	for _, c := range informerResources {
		inf, _ := factory.ForResource(c.gvr)
		if _, ok, _ := inf.Informer().GetStore().GetByKey(ns + "/" + names[c.gvr.Resource]); !ok {
			t.Errorf("%s: the synced informer lacks %s", c.gvr.Resource, names[c.gvr.Resource])
		}
	}
	_, err := clientset(t).CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "after-sync"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease created after the sync", func() bool { return seen["leases"].has(ns + "/after-sync") })
	checkWatchList(t, rec, ns, mediaTypeProtobuf+";stream=watch")
	lister := factory.Core().V1().ConfigMaps().Lister().ConfigMaps(ns)
	if cm, err := lister.Get("kube-root-ca.crt"); err != nil || cm.Data["ca.crt"] == "" {
		t.Errorf("the typed lister: %v %v", cm, err)
	}
}

// TestDynamicInformersWatchList does the same with dynamic informers
// (JSON, unstructured objects).
func TestDynamicInformersWatchList(t *testing.T) {
	ns := namespace(t)
	names := createFixtures(t, ns)
	cfg, rec := recordedConfig()
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(cfg), 0, ns, nil)
	seen := map[string]*keys{}
	for _, c := range informerResources {
		seen[c.gvr.Resource] = &keys{}
		factory.ForResource(c.gvr).Informer().AddEventHandler(seen[c.gvr.Resource].handler())
	}
	runInformers(t, factory.Start, factory.WaitForCacheSync, factory.Shutdown)
	for _, c := range informerResources {
		obj, err := factory.ForResource(c.gvr).Lister().ByNamespace(ns).Get(names[c.gvr.Resource])
		if err != nil || obj.GetObjectKind().GroupVersionKind().Kind != c.kind {
			t.Errorf("%s: lister: %v %v", c.gvr.Resource, obj, err)
		}
	}
	createConfigMaps(t, ns, 1, 1)
	waitFor(t, "the configmap created after the sync", func() bool { return seen["configmaps"].has(ns + "/cm-0") })
	checkWatchList(t, rec, ns, "application/json")
}

// TestMetadataInformersWatchList does the same with metadata informers
// (protobuf PartialObjectMetadata events).
func TestMetadataInformersWatchList(t *testing.T) {
	ns := namespace(t)
	names := createFixtures(t, ns)
	cfg, rec := recordedConfig()
	factory := metadatainformer.NewFilteredSharedInformerFactory(metadata.NewForConfigOrDie(cfg), 0, ns, nil)
	seen := map[string]*keys{}
	for _, c := range informerResources {
		seen[c.gvr.Resource] = &keys{}
		factory.ForResource(c.gvr).Informer().AddEventHandler(seen[c.gvr.Resource].handler())
	}
	runInformers(t, factory.Start, factory.WaitForCacheSync, factory.Shutdown)
	for _, c := range informerResources {
		obj, err := factory.ForResource(c.gvr).Lister().ByNamespace(ns).Get(names[c.gvr.Resource])
		pom, ok := obj.(*metav1.PartialObjectMetadata)
		if err != nil || !ok || pom.UID == "" || pom.Name != names[c.gvr.Resource] {
			t.Errorf("%s: lister: %#v %v", c.gvr.Resource, obj, err)
		}
	}
	_, err := clientset(t).CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "after-sync"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the service created after the sync", func() bool { return seen["services"].has(ns + "/after-sync") })
	checkWatchList(t, rec, ns, mediaTypeProtobuf+";stream=watch")
	for _, e := range rec.find("sendInitialEvents=true") {
		if !strings.Contains(e.accept, "as=PartialObjectMetadata;g=meta.k8s.io;v=v1") {
			t.Errorf("metadata watch sent Accept %q", e.accept)
		}
	}
}

// runInformers starts a factory and waits (30s at most) for every
// informer's sync.
func runInformers[T comparable](t *testing.T, start func(<-chan struct{}), waitSync func(<-chan struct{}) map[T]bool, shutdown func()) {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); shutdown() })
	start(stop)
	timeout := make(chan struct{})
	timer := time.AfterFunc(30*time.Second, func() { close(timeout) })
	defer timer.Stop()
	done := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-timeout:
		}
		close(done)
	}()
	for key, synced := range waitSync(done) {
		if !synced {
			t.Fatalf("%v did not sync", key)
		}
	}
}

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatal(fmt.Errorf("waiting for %s: %w", what, err))
	}
}
