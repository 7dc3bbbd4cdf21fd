package etcd3

import (
	"context"
	"time"

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

// compactProbeKey names no object: watching it from revision 1 only ever
// answers with the compaction revision.
const compactProbeKey = "/miniapiserver-compact-probe"

// CompactRevision implements storage.CompactRevisioner. etcd has no call
// that returns it; a watch from revision 1 is refused with it at once when
// history was compacted, and stays silent when not.
func (s *Store) CompactRevision(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	for resp := range s.client.Watch(ctx, compactProbeKey, clientv3.WithRev(1)) {
		if resp.CompactRevision > 0 {
			return resp.CompactRevision, nil
		}
		if err := resp.Err(); err != nil {
			return 0, wrapClientError(compactProbeKey, err)
		}
	}
	return 0, nil // no answer in time: revision 1 is still there
}
