package cacher_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// listCounter is the raw store, noting the limit of every list it serves.
type listCounter struct {
	storage.Interface
	mu     sync.Mutex
	limits []int64
}

func (l *listCounter) GetList(ctx context.Context, key string, opts storage.ListOptions) (*storage.ListResult, error) {
	l.mu.Lock()
	l.limits = append(l.limits, opts.Predicate.Limit)
	l.mu.Unlock()
	return l.Interface.GetList(ctx, key, opts)
}

// taken returns the limits of the lists served since the last call.
func (l *listCounter) taken() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := fmt.Sprint(l.limits)
	l.limits = nil
	return s
}

// TestPaginationFromCache: the pages of a consistent list with a limit are
// read from the cache (etcd is only asked, by reading one key, whether the
// token's revision is still there), at the first page's revision whatever
// was written since; once the snapshot is gone, etcd serves the same
// pages.
func TestPaginationFromCache(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	var raw *listCounter
	c := newCacher(t, etcd, cfg, func(cc *cacher.Config) {
		raw = &listCounter{Interface: cc.Storage}
		cc.Storage = raw
	})
	for i := range 7 {
		create(t, c, cfg, "ns", fmt.Sprintf("p%d", i))
	}
	list := func(continueToken string) *storage.ListResult {
		t.Helper()
		res, err := c.GetList(context.Background(), cfg.ResourcePrefix, storage.ListOptions{
			Recursive: true, Predicate: storage.SelectionPredicate{Limit: 3, Continue: continueToken,
				Label: storage.Everything.Label, Field: storage.Everything.Field},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	names := func(res *storage.ListResult) string {
		var out []string
		for _, o := range res.Items {
			out = append(out, o.Key[strings.LastIndex(o.Key, "/")+1:])
		}
		return strings.Join(out, ",")
	}
	raw.taken()

	first := list("")
	if got := names(first); got != "p0,p1,p2" || first.RemainingItemCount == nil || *first.RemainingItemCount != 4 {
		t.Fatalf("first page %s, remaining %v", got, first.RemainingItemCount)
	}
	if got := raw.taken(); got != "[]" {
		t.Fatalf("the first page read etcd: lists of limits %s", got)
	}
	create(t, c, cfg, "ns", "p3a") // after the first page's revision: never seen
	second := list(first.Continue)
	third := list(second.Continue)
	if got := names(second) + "|" + names(third); got != "p3,p4,p5|p6" || third.Continue != "" {
		t.Fatalf("pages %s (continue %q)", got, third.Continue)
	}
	if second.RemainingItemCount == nil || *second.RemainingItemCount != 1 || third.RemainingItemCount != nil {
		t.Fatalf("remaining after the second page %v, after the third %v; want 1 and none", second.RemainingItemCount, third.RemainingItemCount)
	}
	if second.ResourceVersion != first.ResourceVersion || third.ResourceVersion != first.ResourceVersion {
		t.Fatalf("revisions %d, %d after %d", second.ResourceVersion, third.ResourceVersion, first.ResourceVersion)
	}
	if got := raw.taken(); got != "[0 0]" {
		t.Fatalf("continued pages read etcd: lists of limits %s, want two reads of one key", got)
	}

	// Nine more paginated lists at nine revisions push the first one's
	// snapshot out: its token is then etcd's to serve, with the same page.
	for i := range 9 {
		create(t, c, cfg, "other", fmt.Sprintf("q%d", i))
		list("")
	}
	raw.taken()
	if got := names(list(first.Continue)); got != "p3,p4,p5" {
		t.Fatalf("page from etcd %s", got)
	}
	if got := raw.taken(); got != "[3]" {
		t.Fatalf("lists of limits %s, want etcd's page of 3", got)
	}
}

// TestPaginationRemainingCount: every page from the cache tells how many
// objects follow it, for lists of the whole resource and of a namespace
// paged through the same snapshot, as etcd's pages would.
func TestPaginationRemainingCount(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg)
	for i := range 9 {
		create(t, c, cfg, "a", fmt.Sprintf("p%d", i))
		create(t, c, cfg, "b", fmt.Sprintf("p%d", i))
	}
	for _, tc := range []struct {
		key   string
		total int64
	}{{cfg.ResourcePrefix, 18}, {cfg.ResourcePrefix + "/a", 9}, {cfg.ResourcePrefix + "/b", 9}} {
		token, seen := "", int64(0)
		for page := 0; ; page++ {
			res, err := c.GetList(context.Background(), tc.key, storage.ListOptions{
				Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2, Continue: token,
					Label: storage.Everything.Label, Field: storage.Everything.Field},
			})
			if err != nil {
				t.Fatal(err)
			}
			seen += int64(len(res.Items))
			if res.Continue == "" {
				if res.RemainingItemCount != nil || seen != tc.total {
					t.Fatalf("%s: last page after %d objects of %d, remaining %v", tc.key, seen, tc.total, res.RemainingItemCount)
				}
				break
			}
			if res.RemainingItemCount == nil || *res.RemainingItemCount != tc.total-seen {
				t.Fatalf("%s, page %d: remaining %v, want %d", tc.key, page, res.RemainingItemCount, tc.total-seen)
			}
			token = res.Continue
		}
	}
}
