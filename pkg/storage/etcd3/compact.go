package etcd3

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactRevKey is the key through which every server sharing an etcd
// agrees on who compacts, so that several replicas compact once per
// interval between them (the same key kube-apiserver uses).
const compactRevKey = "compact_rev_key"

// RunCompactor compacts etcd's history every interval, until ctx ends.
// Each compaction keeps at least one interval of history: it compacts at
// the revision seen at the previous tick, so a watch or a paged list
// younger than the interval can still go on.
func RunCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration) {
	if interval <= 0 {
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var seenVersion, prevRev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		var err error
		seenVersion, prevRev, err = compactOnce(ctx, client, seenVersion, prevRev)
		if err != nil && ctx.Err() == nil {
			slog.Warn("etcd3: compaction failed", "error", err)
		}
	}
}

// compactOnce claims this interval's compaction by bumping compactRevKey
// from the version last seen; if another server claimed it first, it only
// catches up with the key. It returns the key's version and the revision
// to compact at next time.
func compactOnce(ctx context.Context, client *clientv3.Client, seenVersion, prevRev int64) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", seenVersion)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(prevRev, 10))).
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return seenVersion, prevRev, err
	}
	current := resp.Header.Revision
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) > 0 {
			seenVersion = kvs[0].Version
		}
		return seenVersion, current, nil
	}
	seenVersion++
	if prevRev > 0 {
		if _, err := client.Compact(ctx, prevRev); err != nil {
			return seenVersion, current, err
		}
		slog.Debug("etcd3: compacted", "revision", prevRev)
	}
	return seenVersion, current, nil
}
