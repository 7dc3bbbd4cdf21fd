package watchcache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestNoBookmarksUnlessAsked: a watch without allowWatchBookmarks never
// gets a BOOKMARK, though consistent LISTs of cached resources make the
// server ask etcd for progress notifications on the watch stream every
// watch shares; one with allowWatchBookmarks still gets them. Configmaps
// are served straight from etcd, secrets from the watch cache.
func TestNoBookmarksUnlessAsked(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, func(o *app.Options) { o.WatchCacheSizes = []string{"configmaps#0"} })
	client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := srv.CreateNamespace(t)
	cms := client.CoreV1().ConfigMaps(ns)
	secrets := client.CoreV1().Secrets(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	watches := map[string]watch.Interface{}
	for _, w := range []struct {
		name      string
		bookmarks bool
		open      func(metav1.ListOptions) (watch.Interface, error)
	}{
		{"configmaps", false, func(o metav1.ListOptions) (watch.Interface, error) { return cms.Watch(ctx, o) }},
		{"secrets", false, func(o metav1.ListOptions) (watch.Interface, error) { return secrets.Watch(ctx, o) }},
		{"configmaps with bookmarks", true, func(o metav1.ListOptions) (watch.Interface, error) { return cms.Watch(ctx, o) }},
	} {
		opts := metav1.ListOptions{ResourceVersion: secret.ResourceVersion, AllowWatchBookmarks: w.bookmarks}
		wi, err := w.open(opts)
		if err != nil {
			t.Fatalf("watch %s: %v", w.name, err)
		}
		defer wi.Stop()
		watches[w.name] = wi
	}

	// Consistent lists of other cached resources, while configmaps and
	// secrets change: each list waits for its cache to reach etcd's
	// revision, asking etcd for progress.
	const updates = 60
	var listers sync.WaitGroup
	listCtx, stopListing := context.WithCancel(ctx)
	for range 2 {
		listers.Add(1)
		go func() {
			defer listers.Done()
			for listCtx.Err() == nil {
				_, _ = client.CoreV1().ServiceAccounts(ns).List(listCtx, metav1.ListOptions{})
				_, _ = client.CoreV1().Namespaces().List(listCtx, metav1.ListOptions{})
			}
		}()
	}
	for i := range updates {
		cm.Data = map[string]string{"i": fmt.Sprint(i)}
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		secret.StringData = map[string]string{"i": fmt.Sprint(i)}
		if secret, err = secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // let the lists' progress requests interleave
	}
	stopListing()
	listers.Wait()

	for _, name := range []string{"configmaps", "secrets"} {
		for i := range updates {
			ev := nextEvent(t, watches[name])
			if ev.Type != watch.Modified {
				t.Fatalf("%s watch without allowWatchBookmarks: event %d is %s, want MODIFIED", name, i, ev.Type)
			}
		}
	}
	// The watch that asked for bookmarks gets its changes, and the
	// progress notifications requested above as BOOKMARKs.
	modified, bookmarks := 0, 0
	for modified < updates {
		switch ev := nextEvent(t, watches["configmaps with bookmarks"]); ev.Type {
		case watch.Modified:
			modified++
		case watch.Bookmark:
			bookmarks++
		default:
			t.Fatalf("configmaps watch with bookmarks: unexpected %s event", ev.Type)
		}
	}
	t.Logf("the watch that allows bookmarks got %d among its %d changes", bookmarks, updates)
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended early")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return watch.Event{}
}
