package clientgo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"
)

// createConfigMaps creates n labelled configmaps in ns, 16 at a time.
func createConfigMaps(t *testing.T, ns string, n int) {
	t.Helper()
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i), Labels: map[string]string{"paged": "yes"}}, Data: map[string]string{"i": fmt.Sprint(i)}}
				if _, err := cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPager lists 1,200 configmaps with client-go's pager, in pages of
// 100, whole and item by item: every object once, in order, in pages of
// the same revision.
func TestPager(t *testing.T) {
	const total = 1200
	ns := namespace(t)
	createConfigMaps(t, ns, total)
	cfg, rec := recordedConfig()
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		return cms.List(context.Background(), opts)
	}))
	p.PageSize = 100

	t.Run("list", func(t *testing.T) {
		obj, paginated, err := p.List(ctx(t), metav1.ListOptions{LabelSelector: "paged=yes"})
		if err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(obj)
		if err != nil || !paginated || len(items) != total {
			t.Fatalf("%v, paginated %v, %d items", err, paginated, len(items))
		}
		for i, item := range items {
			if name := item.(*corev1.ConfigMap).Name; name != fmt.Sprintf("cm-%04d", i) {
				t.Fatalf("item %d is %s", i, name)
			}
		}
		// Twelve full pages, and a last empty one: past the twelfth, the
		// namespace still holds kube-root-ca.crt, which the selector
		// leaves out (kube answers a continue token there too).
		pages := rec.find("/configmaps?", "limit=100")
		if len(pages) != total/100+1 {
			t.Errorf("%d pages, want %d", len(pages), total/100+1)
		}
		for i, e := range pages {
			if hasContinue := strings.Contains(e.url, "continue="); hasContinue != (i > 0) || e.code != 200 {
				t.Errorf("page %d: %d %s", i, e.code, e.url)
			}
		}
	})
	t.Run("each item", func(t *testing.T) {
		p.PageBufferSize = 2
		seen := map[string]bool{}
		// Objects created while the pager reads do not show: every page
		// is read at the first one's revision.
		once := sync.Once{}
		err := p.EachListItem(ctx(t), metav1.ListOptions{LabelSelector: "paged=yes"}, func(obj runtime.Object) error {
			once.Do(func() {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-late", Labels: map[string]string{"paged": "yes"}}}
				if _, err := clientset(t).CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
					t.Error(err)
				}
			})
			name := obj.(*corev1.ConfigMap).Name
			if seen[name] {
				return fmt.Errorf("%s seen twice", name)
			}
			seen[name] = true
			return nil
		})
		if err != nil || len(seen) != total || seen["cm-late"] {
			t.Errorf("%v: %d items, cm-late %v", err, len(seen), seen["cm-late"])
		}
	})
}
