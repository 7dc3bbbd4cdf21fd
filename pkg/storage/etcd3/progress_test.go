package etcd3_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// TestCompactedSince: whole history answers 0; a compaction past the
// revision asked about answers the compaction's revision; one at or
// before it answers 0 again.
func TestCompactedSince(t *testing.T) {
	etcd := etcdtest.Start(t)
	s := etcd3.New(etcd.Client, storagetest.PodConfig())
	ctx := context.Background()
	var revs []int64
	for i := range 5 {
		resp, err := etcd.Client.Put(ctx, "/probe-test/"+strconv.Itoa(i), "v")
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, resp.Header.Revision)
	}
	check := func(since, want int64) {
		t.Helper()
		got, err := s.CompactedSince(ctx, since)
		if err != nil || got != want {
			t.Fatalf("CompactedSince(%d) = %d, %v; want %d", since, got, err, want)
		}
	}
	check(1, 0)
	check(revs[0], 0)
	etcd.Compact(revs[2])
	check(1, revs[2])
	check(revs[1], revs[2])
	check(revs[2], 0)
	check(revs[4], 0)
}
