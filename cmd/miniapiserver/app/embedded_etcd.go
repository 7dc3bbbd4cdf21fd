package app

import (
	"context"

	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// startEmbeddedEtcd starts the embedded etcd of --data-dir: alone on
// loopback, or, in the embedded HA mode, as a member of a cluster of the
// embedded etcds of several servers; either way over TLS, with client
// certificates (embeddedEtcdTLS).
//
// In the HA mode the server still talks to its own member only, over
// loopback: the member serves the cluster's data, and its reads are
// linearizable all the same, since etcd answers a read (not asked to be
// serializable, and the storage never asks) only after confirming with
// the leader that it has applied everything committed before the read
// (ReadIndex). A member cut off from the quorum fails those reads and the
// writes, so /readyz fails and clients go to another server, and its
// watches, which require a leader, end and are resumed once it is back.
func startEmbeddedEtcd(ctx context.Context, o *Options) (*embedetcd.Server, error) {
	files, err := embeddedEtcdTLS(o)
	if err != nil {
		return nil, err
	}
	cfg := embedetcd.Config{Dir: embeddedEtcdDir(o.DataDir), UnsafeNoFsync: o.EtcdUnsafeNoFsync,
		QuotaBackendBytes: o.EtcdQuotaBackendBytes, ClientTLS: &files}
	if eo := &o.EmbeddedEtcd; eo.enabled() {
		cfg.Cluster = &embedetcd.Cluster{Name: eo.Name, PeerURL: eo.PeerURL, ClientURL: eo.clientURL(),
			Init: eo.ClusterInit, Join: eo.Join, TLS: files}
	}
	return embedetcd.Start(ctx, cfg)
}

// reportEtcdFailure makes the server fail when its embedded etcd stops on
// its own (a member removed from its cluster stops), as one of its loops.
func (s *Server) reportEtcdFailure(etcd *embedetcd.Server) {
	s.loops.Go(func(ctx context.Context) {
		select {
		case err, ok := <-etcd.Failed():
			if ok {
				select {
				case s.errs <- err:
				default:
				}
			}
		case <-ctx.Done():
		}
	})
}
