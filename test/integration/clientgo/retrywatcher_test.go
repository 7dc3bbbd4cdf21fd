package clientgo

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// shortWatches watches configmaps of ns with watches the server ends
// after a second (timeoutSeconds), as it ends any watch at its deadline.
func shortWatches(cs kubernetes.Interface, ns string) *cache.ListWatch {
	return &cache.ListWatch{WatchFuncWithContext: func(c context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		timeout := int64(1)
		opts.TimeoutSeconds = &timeout
		return cs.CoreV1().ConfigMaps(ns).Watch(c, opts)
	}}
}

// next returns the next event of w that is no bookmark.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if e.Type != watch.Bookmark {
				return e
			}
		case <-timeout:
			t.Fatal("no event")
		}
	}
}

// TestRetryWatcher follows configmaps with client-go's RetryWatcher over
// watches that the server ends: each change arrives once, in order, the
// watch resumed from the last revision seen; a revision the server no
// longer has ends it with kube's 410.
func TestRetryWatcher(t *testing.T) {
	ns := namespace(t)
	cs := clientset(t)
	cms := cs.CoreV1().ConfigMaps(ns)
	list, err := cms.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, rec := recordedConfig()
	rw, err := watchtools.NewRetryWatcherWithContext(ctx(t), list.ResourceVersion, shortWatches(kubernetes.NewForConfigOrDie(cfg), ns))
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Stop()

	var events []string
	record := func(e watch.Event) {
		cm, ok := e.Object.(*corev1.ConfigMap)
		if !ok {
			t.Fatalf("event %s %T", e.Type, e.Object)
		}
		events = append(events, string(e.Type)+" "+cm.Name+" "+cm.Data["v"])
	}
	write := func(name, v string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": v}}
		if v == "1" {
			_, err = cms.Create(ctx(t), cm, metav1.CreateOptions{})
		} else {
			_, err = cms.Update(ctx(t), cm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	write("a", "1")
	record(next(t, rw))
	// Past the server's end of the first watch, the retry watcher has
	// watched again, from the last revision it saw.
	waitFor(t, "a second watch", func() bool { return len(rec.find("/configmaps?", "watch=true")) >= 2 })
	write("b", "1")
	write("a", "2")
	if err := cms.Delete(ctx(t), "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		record(next(t, rw))
	}
	want := "ADDED a 1, ADDED b 1, MODIFIED a 2, DELETED b 1"
	if got := strings.Join(events, ", "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	watches := rec.find("/configmaps?", "watch=true")
	for i, w := range watches {
		if w.code != http.StatusOK || !strings.Contains(w.url, "allowWatchBookmarks=true") || !strings.Contains(w.url, "timeoutSeconds=1") ||
			(i == 0 && !strings.Contains(w.url, "resourceVersion="+list.ResourceVersion+"&")) {
			t.Errorf("watch %d: %d %s", i, w.code, w.url)
		}
	}

	t.Run("too old", func(t *testing.T) {
		onlyHere(t)
		// Twelve writes push the first revision out of the ten events
		// the podtemplates' watch cache keeps.
		templates := cs.CoreV1().PodTemplates(ns)
		first, err := templates.Create(ctx(t), &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Template: template("t")}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 12; i++ {
			if _, err := templates.Patch(ctx(t), "t", types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{"i":"%d"}}}`, i)), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		lw := &cache.ListWatch{WatchFuncWithContext: func(c context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return templates.Watch(c, opts)
		}}
		old, err := watchtools.NewRetryWatcherWithContext(ctx(t), first.ResourceVersion, lw)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Stop()
		e := next(t, old)
		status, ok := e.Object.(*metav1.Status)
		if e.Type != watch.Error || !ok || status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired ||
			!strings.HasPrefix(status.Message, "too old resource version: "+first.ResourceVersion+" (") {
			t.Errorf("got %s %+v", e.Type, e.Object)
		}
		select {
		case <-old.Done():
		case <-time.After(10 * time.Second):
			t.Error("the retry watcher went on after a 410")
		}
	})
}
