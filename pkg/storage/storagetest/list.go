package storagetest

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

func testList(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.create("b", "p2", "n1", map[string]string{"app": "web", "tier": "front"})
	f.create("a", "p1", "n2", map[string]string{"app": "db"})
	f.create("b", "p1", "n1", map[string]string{"app": "web"})
	f.create("c", "p3", "", nil)

	mustLabel := func(s string) labels.Selector {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	for _, tc := range []struct {
		name  string
		label string
		field fields.Selector
		want  string
	}{
		{"everything, sorted by key", "", nil, "a/p1,b/p1,b/p2,c/p3"},
		{"label equals", "app=web", nil, "b/p1,b/p2"},
		{"label not equals", "app!=web", nil, "a/p1,c/p3"},
		{"label in", "app in (db,web)", nil, "a/p1,b/p1,b/p2"},
		{"label notin", "app notin (web)", nil, "a/p1,c/p3"},
		{"label exists", "tier", nil, "b/p2"},
		{"label does not exist", "!app", nil, "c/p3"},
		{"field nodeName", "", fields.OneTermEqualSelector("spec.nodeName", "n1"), "b/p1,b/p2"},
		{"field namespace", "", fields.OneTermEqualSelector("metadata.namespace", "a"), "a/p1"},
		{"field name not equal", "", fields.OneTermNotEqualSelector("metadata.name", "p1"), "b/p2,c/p3"},
		{"label and field", "app=web", fields.OneTermEqualSelector("metadata.name", "p2"), "b/p2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pred := storage.SelectionPredicate{Label: mustLabel(tc.label), Field: tc.field}
			res := f.list(storage.ListOptions{Predicate: pred})
			if got := join(names(t, res.Items)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if res.ResourceVersion == 0 {
				t.Fatal("list without a resourceVersion")
			}
		})
	}

	t.Run("one namespace", func(t *testing.T) {
		res, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix+"/b", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		if got := join(names(t, res.Items)); got != "b/p1,b/p2" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("a prefix is not a namespace's prefix", func(t *testing.T) {
		f.create("bb", "x", "", nil)
		res, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix+"/b", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		if got := join(names(t, res.Items)); got != "b/p1,b/p2" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("single key", func(t *testing.T) {
		res, err := f.s.GetList(f.ctx, f.key("a", "p1"), storage.ListOptions{Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		if got := join(names(t, res.Items)); got != "a/p1" {
			t.Fatalf("got %s", got)
		}
	})
}

func testListPaging(t *testing.T, h Harness) {
	f := newFixture(t, h)
	const n = 23
	for i := range n {
		lbl := map[string]string{"even": strconv.FormatBool(i%2 == 0)}
		f.create("ns", fmt.Sprintf("p%02d", i), "", lbl)
	}

	for _, tc := range []struct {
		name  string
		label string
		limit int64
		want  int
	}{
		{"every object exactly once", "", 5, n},
		{"with a selector", "even=true", 4, (n + 1) / 2},
		{"limit above the size", "", 100, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, _ := labels.Parse(tc.label)
			got := f.walkPages(t, storage.SelectionPredicate{Label: sel, Limit: tc.limit}, tc.name, n)
			if len(got) != tc.want {
				t.Fatalf("got %d objects, want %d: %v", len(got), tc.want, got)
			}
		})
	}

	t.Run("remaining item count", func(t *testing.T) {
		res := f.listIn("ns", storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 10}})
		if res.RemainingItemCount == nil {
			t.Fatal("no remainingItemCount on an unfiltered page")
		}
		total := len(f.listIn("ns", storage.ListOptions{}).Items)
		if got := *res.RemainingItemCount; got != int64(total-10) {
			t.Fatalf("remainingItemCount = %d, want %d", got, total-10)
		}
	})
	t.Run("continue with a resourceVersion is invalid", func(t *testing.T) {
		res := f.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 5}})
		_, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true, ResourceVersion: "1",
			Predicate: storage.SelectionPredicate{Limit: 5, Continue: res.Continue, Label: labels.Everything(), Field: fields.Everything()},
		})
		wantCode(t, err, storage.ErrCodeInvalidObj)
	})
	t.Run("malformed continue is invalid", func(t *testing.T) {
		_, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true,
			Predicate: storage.SelectionPredicate{Limit: 5, Continue: "not-a-token", Label: labels.Everything(), Field: fields.Everything()},
		})
		wantCode(t, err, storage.ErrCodeInvalidObj)
	})
}

// walkPages lists namespace ns page by page with pred, creating an object
// between pages (writes after the first page must not show in later
// ones), and returns the names seen. It fails t if a page is over the
// limit, at another revision than the first, repeats a name, or paging
// takes more than maxPages.
func (f *fixture) walkPages(t *testing.T, pred storage.SelectionPredicate, tag string, maxPages int) []string {
	t.Helper()
	first := f.listIn("ns", storage.ListOptions{Predicate: pred})
	var got []string
	seen := map[string]bool{}
	res := first
	for pages := 0; ; pages++ {
		if pages > maxPages {
			t.Fatal("paging does not end")
		}
		if int64(len(res.Items)) > pred.Limit {
			t.Fatalf("page of %d items over limit %d", len(res.Items), pred.Limit)
		}
		if res.ResourceVersion != first.ResourceVersion {
			t.Fatalf("page at revision %d, first page at %d", res.ResourceVersion, first.ResourceVersion)
		}
		for _, name := range names(t, res.Items) {
			if seen[name] {
				t.Fatalf("%s returned twice", name)
			}
			seen[name] = true
			got = append(got, name)
		}
		if res.Continue == "" {
			return got
		}
		f.create("zz-late", fmt.Sprintf("%s-%d", tag, pages), "", map[string]string{"even": "true"})
		pred.Continue = res.Continue
		res = f.listIn("ns", storage.ListOptions{Predicate: pred})
	}
}

func testListResourceVersion(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.create("ns", "a", "", map[string]string{"v": "1"})
	before := f.list(storage.ListOptions{})
	f.update("ns", "a", func(p *corev1.Pod) { p.Labels["v"] = "2" })
	f.create("ns", "b", "", nil)

	labelOf := func(t *testing.T, res *storage.ListResult, i int) string {
		p := &corev1.Pod{}
		if err := res.Items[i].Decode(p); err != nil {
			t.Fatal(err)
		}
		return p.Labels["v"]
	}
	t.Run("exact reads the past", func(t *testing.T) {
		res := f.list(storage.ListOptions{
			ResourceVersion:      strconv.FormatInt(before.ResourceVersion, 10),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		})
		if res.ResourceVersion != before.ResourceVersion || len(res.Items) != 1 || labelOf(t, res, 0) != "1" {
			t.Fatalf("exact list at %d: rv %d, %d items", before.ResourceVersion, res.ResourceVersion, len(res.Items))
		}
	})
	t.Run("unset reads the latest", func(t *testing.T) {
		res := f.list(storage.ListOptions{})
		if len(res.Items) != 2 || labelOf(t, res, 0) != "2" || res.ResourceVersion <= before.ResourceVersion {
			t.Fatalf("latest list: rv %d, %d items", res.ResourceVersion, len(res.Items))
		}
	})
	t.Run("not older than", func(t *testing.T) {
		res := f.list(storage.ListOptions{
			ResourceVersion:      strconv.FormatInt(before.ResourceVersion, 10),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		})
		if res.ResourceVersion < before.ResourceVersion {
			t.Fatalf("list at %d, older than %d", res.ResourceVersion, before.ResourceVersion)
		}
	})
	t.Run("not older than the future", func(t *testing.T) {
		_, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true, Predicate: storage.Everything,
			ResourceVersion:      strconv.FormatInt(before.ResourceVersion+1000, 10),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		})
		wantCode(t, err, storage.ErrCodeTooLargeResourceVersion)
	})
	t.Run("malformed resourceVersion", func(t *testing.T) {
		_, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true, Predicate: storage.Everything, ResourceVersion: "abc",
		})
		wantCode(t, err, storage.ErrCodeInvalidObj)
	})
}

func testListCompacted(t *testing.T, h Harness) {
	f := newFixture(t, h)
	for i := range 6 {
		f.create("ns", fmt.Sprintf("p%d", i), "", nil)
	}
	first := f.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 2}})
	old := first.ResourceVersion
	f.update("ns", "p0", func(p *corev1.Pod) { p.Labels = map[string]string{"x": "y"} })
	latest := f.list(storage.ListOptions{})
	h.Compact(t, latest.ResourceVersion)

	t.Run("exact at a compacted revision", func(t *testing.T) {
		_, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true, Predicate: storage.Everything,
			ResourceVersion: strconv.FormatInt(old, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		})
		wantCode(t, err, storage.ErrCodeExpired)
	})
	t.Run("continue at a compacted revision", func(t *testing.T) {
		_, err := f.s.GetList(f.ctx, f.cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true,
			Predicate: storage.SelectionPredicate{Limit: 2, Continue: first.Continue, Label: labels.Everything(), Field: fields.Everything()},
		})
		wantCode(t, err, storage.ErrCodeExpired)
		var se *storage.Error
		if !errors.As(err, &se) || se.Continue == "" {
			t.Fatalf("expired continue without an inconsistent-continue token: %v", err)
		}
		// That token goes on at the latest revision from the same key.
		res := f.list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 10, Continue: se.Continue}})
		if got := join(names(t, res.Items)); got != "ns/p2,ns/p3,ns/p4,ns/p5" {
			t.Fatalf("inconsistent continue read %s", got)
		}
	})
}
