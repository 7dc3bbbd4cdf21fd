package etcd3

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

var (
	_ storage.ProgressRequester = (*Store)(nil)
	_ storage.CompactRevisioner = (*Store)(nil)
)

// RequestWatchProgress implements storage.ProgressRequester. Watches share
// one gRPC stream per client and context metadata; this server opens
// every watch with WithRequireLeader, so the request goes to that stream.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	return s.client.RequestProgress(clientv3.WithRequireLeader(ctx))
}

// compactProbeKey names no object: reading it at an old revision only
// tells whether that revision was compacted.
const compactProbeKey = "/miniapiserver-compact-probe"

// CompactedSince implements storage.CompactRevisioner. etcd has no call
// that returns its compaction revision. A read at rev answers from etcd's
// index, refused when rev was compacted; only then is a watch from rev
// opened, which etcd refuses at once with the compaction revision. (A
// watch from a revision that is still there would make etcd read every
// change since from its database before it goes quiet: opened from
// revision 1 by every resource's cache every 10 s, that read all of
// etcd's history each time and held up its writes for up to a second.)
func (s *Store) CompactedSince(ctx context.Context, rev int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	rev = max(rev, 1)
	_, err := s.client.Get(ctx, compactProbeKey, clientv3.WithRev(rev), clientv3.WithSerializable())
	if err == nil {
		return 0, nil
	}
	if !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, wrapClientError(compactProbeKey, err)
	}
	for resp := range s.client.Watch(ctx, compactProbeKey, clientv3.WithRev(rev)) {
		if resp.CompactRevision > 0 {
			return resp.CompactRevision, nil
		}
		if err := resp.Err(); err != nil {
			return 0, wrapClientError(compactProbeKey, err)
		}
	}
	return 0, ctx.Err()
}
