package clientgo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// eventLog is what an informer's handler saw, as "add name",
// "update name", "delete name".
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(kind string, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, kind+" "+m.GetName())
}

func (l *eventLog) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.add("add", obj) },
		UpdateFunc: func(_, obj any) { l.add("update", obj) },
		DeleteFunc: func(obj any) { l.add("delete", obj) },
	}
}

// sortedPrefix is the log with its first n events sorted.
func (l *eventLog) sortedPrefix(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	events := slices.Clone(l.events)
	if len(events) >= n {
		slices.Sort(events[:n])
	}
	return strings.Join(events, ", ")
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events, ", ")
}

// informerKind builds an informer of configmaps in a namespace from a
// client configuration; start runs it until stop.
type informerKind struct {
	name  string
	build func(cfg *rest.Config, ns string) (cache.SharedIndexInformer, func(stop <-chan struct{}))
	// accept is the media type the informer's requests ask for first.
	accept string
}

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

var informerKinds = []informerKind{
	{name: "typed", accept: "application/vnd.kubernetes.protobuf", build: func(cfg *rest.Config, ns string) (cache.SharedIndexInformer, func(<-chan struct{})) {
		f := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace(ns))
		return f.Core().V1().ConfigMaps().Informer(), f.Start
	}},
	{name: "dynamic", accept: "application/json", build: func(cfg *rest.Config, ns string) (cache.SharedIndexInformer, func(<-chan struct{})) {
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(cfg), 0, ns, nil)
		return f.ForResource(configMapsGVR).Informer(), f.Start
	}},
	{name: "metadata", accept: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata", build: func(cfg *rest.Config, ns string) (cache.SharedIndexInformer, func(<-chan struct{})) {
		f := metadatainformer.NewFilteredSharedInformerFactory(metadata.NewForConfigOrDie(cfg), 0, ns, nil)
		return f.ForResource(configMapsGVR).Informer(), f.Start
	}},
}

// TestInformers runs typed, dynamic and metadata informers of configmaps,
// listing then watching (WatchListClient off) and with a WatchList
// (client-go 0.37's default), and checks the requests each made and the
// events their handlers got for objects created, changed and deleted.
func TestInformers(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		for _, kind := range informerKinds {
			t.Run(fmt.Sprintf("%s watchList=%v", kind.name, watchList), func(t *testing.T) {
				clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
				ns := namespace(t)
				cms := clientset(t).CoreV1().ConfigMaps(ns)
				if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				cfg, rec := recordedConfig()
				informer, start := kind.build(cfg, ns)
				log := &eventLog{}
				if _, err := informer.AddEventHandler(log.handler()); err != nil {
					t.Fatal(err)
				}
				stop := make(chan struct{})
				defer close(stop)
				start(stop)
				syncCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
					t.Fatal("the informer did not sync")
				}
				keys := informer.GetStore().ListKeys()
				if len(keys) != 2 { // before, and kube-root-ca.crt
					t.Errorf("synced keys %v", keys)
				}
				checkInformerRequests(t, rec, watchList, kind.accept)

				if _, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := cms.Patch(ctx(t), "after", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"changed":"yes"}}}`), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := cms.Delete(ctx(t), "after", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				// The initial adds come in no particular order.
				want := "add before, add kube-root-ca.crt, add after, update after, delete after"
				deadline := time.Now().Add(20 * time.Second)
				for strings.Count(log.String(), ",") < 4 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if got := log.sortedPrefix(2); got != want {
					t.Errorf("events: %s\nwant %s", got, want)
				}
				if _, exists, _ := informer.GetStore().GetByKey(ns + "/after"); exists {
					t.Error("the store still has the deleted object")
				}
			})
		}
	}
}

// checkInformerRequests checks how an informer synced: a LIST then a
// WATCH from its revision, or one WATCH asking for the initial events.
func checkInformerRequests(t *testing.T, rec *recorder, watchList bool, accept string) {
	t.Helper()
	exchanges := rec.find("/configmaps")
	if len(exchanges) == 0 {
		t.Fatal("no request recorded")
	}
	first := exchanges[0]
	if !strings.HasPrefix(first.accept, accept) || first.code != 200 {
		t.Errorf("first request %s: Accept %q, %d", first.url, first.accept, first.code)
	}
	if watchList {
		if !strings.Contains(first.url, "watch=true") || !strings.Contains(first.url, "sendInitialEvents=true") ||
			!strings.Contains(first.url, "resourceVersionMatch=NotOlderThan") || !strings.Contains(first.url, "allowWatchBookmarks=true") {
			t.Errorf("not a WatchList: %s", first.url)
		}
		return
	}
	if strings.Contains(first.url, "watch=true") || !strings.Contains(first.url, "limit=500") || !strings.Contains(first.url, "resourceVersion=0") {
		t.Errorf("not a LIST: %s", first.url)
	}
	waitFor(t, "the watch after the list", func() bool {
		w := rec.find("/configmaps", "watch=true", "allowWatchBookmarks=true")
		return len(w) > 0 && !strings.Contains(w[0].url, "sendInitialEvents")
	})
}
