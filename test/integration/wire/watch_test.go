package wire

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// next returns the next event of w, failing after a timeout.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return watch.Event{}
}

// TestProtobufTypedWatch watches with client-go's typed client, which asks
// for protobuf frames, and checks every kind of event decodes.
func TestProtobufTypedWatch(t *testing.T) {
	ns := namespace(t)
	cfg, rec := recordedConfig()
	client := kubernetes.NewForConfigOrDie(cfg)
	cms := client.CoreV1().ConfigMaps(ns)
	ctx := context.Background()
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"l": "1"}}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Data["k"] = "v2"
	updated, err := cms.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ  watch.EventType
		data string
		rv   string
	}{{watch.Added, "v", created.ResourceVersion}, {watch.Modified, "v2", updated.ResourceVersion}, {watch.Deleted, "v2", ""}}
	for _, wnt := range want {
		ev := next(t, w)
		for ev.Type == watch.Bookmark {
			ev = next(t, w)
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != wnt.typ || !ok || cm.Name != "w" || cm.Namespace != ns || cm.Data["k"] != wnt.data || cm.Labels["l"] != "1" ||
			(wnt.rv != "" && cm.ResourceVersion != wnt.rv) {
			t.Fatalf("got %s %#v, want %s data %s rv %s", ev.Type, ev.Object, wnt.typ, wnt.data, wnt.rv)
		}
	}
	watches := rec.find("/namespaces/"+ns+"/configmaps", "watch=true")
	if len(watches) != 1 || watches[0].contentType != mediaTypeProtobuf+";stream=watch" || watches[0].uncompressed {
		t.Errorf("watch exchanges: %+v", watches)
	}
}

// TestProtobufWatchList checks a WatchList in protobuf: the initial
// events, then a bookmark carrying the initial-events-end annotation.
func TestProtobufWatchList(t *testing.T) {
	ns := namespace(t)
	createConfigMaps(t, ns, 5, 10)
	sendInitialEvents := true
	cfg, rec := recordedConfig()
	w, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Watch(context.Background(), metav1.ListOptions{
		SendInitialEvents: &sendInitialEvents, AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	names := map[string]bool{}
	for {
		ev := next(t, w)
		if ev.Type == watch.Bookmark {
			cm := ev.Object.(*corev1.ConfigMap)
			if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || cm.ResourceVersion == "" {
				t.Fatalf("bookmark: %#v", cm)
			}
			break
		}
		if ev.Type != watch.Added {
			t.Fatalf("initial event %s %#v", ev.Type, ev.Object)
		}
		names[ev.Object.(*corev1.ConfigMap).Name] = true
	}
	if len(names) != 6 || !names["kube-root-ca.crt"] || !names["cm-4"] {
		t.Errorf("initial events: %v", names)
	}
	// Go's transport asks for gzip: kube compresses a WatchList stream,
	// one gzip member per flush, and the client must see each event as
	// soon as it is flushed.
	watches := rec.find("/namespaces/"+ns+"/configmaps", "sendInitialEvents=true")
	if len(watches) != 1 || watches[0].contentType != mediaTypeProtobuf+";stream=watch" || !watches[0].uncompressed {
		t.Errorf("watch exchanges: %+v", watches)
	}
}
