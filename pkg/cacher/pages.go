package cacher

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/google/btree"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Paginated lists from the cache, as kube 1.37 serves them (KEP-4988): the
// first page of a consistent list with a limit is read from a snapshot of
// the store (O(1) to take, copy on write), and the snapshot is kept under
// the page's revision, so that the pages its continue tokens ask for read
// the very same state from memory instead of from etcd. A token whose
// snapshot is gone (too old, too many) is served by etcd as before, with
// the same result.

const (
	// maxSnapshots bounds the snapshots a resource keeps: each holds the
	// tree nodes changed since it was taken.
	maxSnapshots = 8
	// snapshotTTL is how long a snapshot serves continue tokens: a client
	// pages through a list in seconds.
	snapshotTTL = time.Minute
)

// snapshots are the stores that paginated lists were served from, by
// revision.
type snapshots struct {
	mu    sync.Mutex
	items []snapshot // oldest first
}

type snapshot struct {
	rv    int64
	tree  *btree.BTreeG[*entry]
	taken time.Time
	// follows remembers, for the continue tokens of unfiltered lists
	// served from this snapshot, how many keys follow their start within
	// their prefix: the next page's remainingItemCount is then that count
	// less the keys it reads, where counting the rest of the tree on
	// every page would make paging through n objects cost O(n^2).
	follows map[pageStart]int64
}

// pageStart is where a continue token resumes a list.
type pageStart struct{ prefix, start string }

// maxFollows bounds the counts a snapshot remembers (a page each):
// past it, pages count the keys that follow them.
const maxFollows = 10000

// add keeps tree as the store at rv, unless one is kept already.
func (s *snapshots) add(rv int64, tree *btree.BTreeG[*entry], now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	for _, sn := range s.items {
		if sn.rv == rv {
			return
		}
	}
	if len(s.items) == maxSnapshots {
		s.items[0] = snapshot{} // let the tree go
		s.items = s.items[1:]
	}
	s.items = append(s.items, snapshot{rv: rv, tree: tree, taken: now, follows: map[pageStart]int64{}})
}

// followsAt returns how many keys follow at within the snapshot at rv, if
// a page served from it counted them.
func (s *snapshots) followsAt(rv int64, at pageStart) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range s.items {
		if sn.rv == rv {
			n, ok := sn.follows[at]
			return n, ok
		}
	}
	return 0, false
}

// recordFollows remembers that n keys follow at within the snapshot at rv.
func (s *snapshots) recordFollows(rv int64, at pageStart, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range s.items {
		if sn.rv == rv && len(sn.follows) < maxFollows {
			sn.follows[at] = n
		}
	}
}

// nextPage is where the page res resumes, and how many keys follow it
// (false when res is the last page or filtered).
func nextPage(plan storage.ListPlan, res *storage.ListResult, lastKey string) (pageStart, int64, bool) {
	if res.Continue == "" || res.RemainingItemCount == nil {
		return pageStart{}, 0, false
	}
	return pageStart{prefix: plan.KeyPrefix, start: lastKey + "\x00"}, *res.RemainingItemCount, true
}

// get returns the store at rv, if kept.
func (s *snapshots) get(rv int64, now time.Time) (*btree.BTreeG[*entry], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	for _, sn := range s.items {
		if sn.rv == rv {
			return sn.tree, true
		}
	}
	return nil, false
}

// oldest returns the revision of the oldest snapshot kept.
func (s *snapshots) oldest() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.items) == 0 {
		return 0, false
	}
	return s.items[0].rv, true
}

// prune drops the expired snapshots and those at or before compacted.
func (s *snapshots) prune(now time.Time, compacted int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	kept := s.items[:0]
	for _, sn := range s.items {
		if sn.rv > compacted {
			kept = append(kept, sn)
		}
	}
	clear(s.items[len(kept):])
	s.items = kept
}

func (s *snapshots) expire(now time.Time) {
	i := 0
	for i < len(s.items) && now.Sub(s.items[i].taken) > snapshotTTL {
		i++
	}
	clear(s.items[:i]) // let the trees go
	s.items = s.items[i:]
}

// listPage serves a recursive list with a limit from the cache when it
// can: the first page of a consistent list (resourceVersion unset), or a
// continue token whose snapshot is kept. handled is false for the lists
// it leaves to the caller.
func (c *Cacher) listPage(ctx context.Context, key string, opts storage.ListOptions) (res *storage.ListResult, handled bool, err error) {
	pred := opts.Predicate
	if pred.Continue == "" && opts.ResourceVersion != "" {
		return nil, false, nil
	}
	plan, err := storage.PlanList(key, opts)
	if err != nil {
		return nil, true, err
	}
	if pred.Continue == "" {
		current, err := c.storage.CurrentResourceVersion(ctx)
		if err != nil {
			return nil, true, err
		}
		if err := c.waitUntilFresh(ctx, current); err != nil {
			return nil, !storage.IsTooLargeResourceVersion(err), err // the cache lags: etcd answers
		}
		tree, rv := c.wc.snapshot()
		res, lastKey, err := page(tree, plan, pred, rv, nil)
		if err == nil && res.Continue != "" {
			c.pages.add(rv, tree, time.Now())
			if at, n, ok := nextPage(plan, res, lastKey); ok {
				c.pages.recordFollows(rv, at, n)
			}
		}
		return res, true, err
	}
	tree, ok := c.pages.get(plan.Rev, time.Now())
	if !ok || plan.Rev == 0 {
		return nil, false, nil
	}
	// A token for a revision etcd has compacted away is expired (410),
	// whatever the cache still holds. Reading one key at that revision
	// tells (a range would make etcd count the rest of it); etcd then
	// answers the list itself, with its expired-continue error.
	_, err = c.storage.GetList(ctx, plan.StartKey, storage.ListOptions{
		ResourceVersion:      strconv.FormatInt(plan.Rev, 10),
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		Predicate:            storage.Everything,
	})
	switch {
	case storage.IsExpired(err):
		return nil, false, nil
	case err != nil:
		return nil, true, err
	}
	var follows *int64
	if n, ok := c.pages.followsAt(plan.Rev, pageStart{prefix: plan.KeyPrefix, start: plan.StartKey}); ok {
		follows = &n
	}
	res, lastKey, err := page(tree, plan, pred, plan.Rev, follows)
	if err == nil {
		if at, n, ok := nextPage(plan, res, lastKey); ok {
			c.pages.recordFollows(plan.Rev, at, n)
		}
	}
	return res, true, err
}

// page reads one page of a list from tree as etcd3's GetList reads it from
// etcd: up to pred.Limit matching objects from plan.StartKey on; when keys
// follow the last one looked at (matching or not), a continue token from
// just after it, and, for an unfiltered list, how many keys follow.
//
// follows, when known, is how many keys follow plan.StartKey within the
// prefix; the keys after the page are then counted without reading them.
// page also returns the last key it looked at.
func page(tree *btree.BTreeG[*entry], plan storage.ListPlan, pred storage.SelectionPredicate, rv int64, follows *int64) (*storage.ListResult, string, error) {
	res := &storage.ListResult{ResourceVersion: rv}
	var lastKey string
	var read int64
	hasMore := false
	end := probe(prefixEnd(plan.KeyPrefix))
	tree.AscendRange(probe(plan.StartKey), end, func(e *entry) bool {
		if int64(len(res.Items)) >= pred.Limit {
			hasMore = true
			return false
		}
		lastKey = e.key()
		read++
		if pred.MatchesAttrs(&e.labels, &e.fields) {
			res.Items = append(res.Items, e.obj)
		}
		return true
	})
	if !hasMore {
		return res, lastKey, nil
	}
	token, err := storage.EncodeContinue(lastKey+"\x00", plan.KeyPrefix, rv)
	if err != nil {
		return nil, "", storage.NewInternalError(plan.KeyPrefix, err)
	}
	res.Continue = token
	if pred.Empty() {
		var remaining int64
		if follows != nil {
			remaining = *follows - read
		} else {
			tree.AscendRange(probe(lastKey+"\x00"), end, func(*entry) bool {
				remaining++
				return true
			})
		}
		res.RemainingItemCount = &remaining
	}
	return res, lastKey, nil
}
