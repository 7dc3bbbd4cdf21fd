package cacher

import (
	"testing"
	"time"

	"github.com/google/btree"
)

// TestSnapshotsBounds: the snapshots of paginated lists are kept by
// revision, at most maxSnapshots of them, for snapshotTTL, and none at or
// before a compacted revision.
func TestSnapshotsBounds(t *testing.T) {
	var s snapshots
	t0 := time.Now()
	tree := func() *btree.BTreeG[*entry] { return btree.NewG(btreeDegree, lessEntry) }
	kept := func(now time.Time) []int64 {
		var rvs []int64
		for rv := int64(1); rv <= 20; rv++ {
			if _, ok := s.get(rv, now); ok {
				rvs = append(rvs, rv)
			}
		}
		return rvs
	}

	first := tree()
	s.add(1, first, t0)
	s.add(1, tree(), t0) // the same revision: the first stays
	if got, _ := s.get(1, t0); got != first {
		t.Fatal("a second snapshot at a revision replaced the first")
	}
	for rv := int64(2); rv <= 10; rv++ {
		s.add(rv, tree(), t0.Add(time.Duration(rv)*time.Second))
	}
	now := t0.Add(10 * time.Second)
	if got := kept(now); len(got) != maxSnapshots || got[0] != 3 {
		t.Fatalf("kept %v, want the newest %d", got, maxSnapshots)
	}
	s.prune(now, 5)
	if got := kept(now); len(got) != 5 || got[0] != 6 {
		t.Fatalf("after compaction at 5: kept %v", got)
	}
	// Snapshot 6 was taken at t0+6s: it expires a TTL later, 7 a second on.
	if got := kept(t0.Add(6*time.Second + snapshotTTL + time.Millisecond)); len(got) != 4 || got[0] != 7 {
		t.Fatalf("after 6's expiry: kept %v", got)
	}
	s.prune(t0.Add(time.Hour), 0)
	if len(s.items) != 0 {
		t.Fatalf("%d snapshots kept an hour later", len(s.items))
	}
}
