package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MaintenanceConfig says how RunMaintenance looks after etcd's database.
type MaintenanceConfig struct {
	// Interval between two checks of every member (0: no maintenance).
	Interval time.Duration
	// DefragThreshold is the share of a member's database file that must
	// be free (allocated, no longer in use after compactions) for it to
	// be defragmented, in (0, 1].
	DefragThreshold float64
}

// defragTimeout bounds one member's defragmentation: it rewrites the
// whole file, and the member serves nothing meanwhile.
const defragTimeout = 5 * time.Minute

// RunMaintenance checks etcd every interval until ctx ends:
//   - a member whose database file is at least DefragThreshold free is
//     defragmented, which gives the space back to the file system and to
//     the space quota (etcd counts the file's size against it);
//   - when the space quota is used up (the NOSPACE alarm: etcd refuses
//     every write but deletes), the history is compacted up to the current
//     revision, every member defragmented and the alarm disarmed: writes
//     resume if the current objects fit. Watches from before then end
//     with 410 Gone and their clients list again.
//
// Members are done one at a time. Several servers sharing an etcd may
// each do it; a second pass finds little to do.
func RunMaintenance(ctx context.Context, client *clientv3.Client, cfg MaintenanceConfig) {
	if cfg.Interval <= 0 {
		return
	}
	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if err := maintain(ctx, client, cfg.DefragThreshold); err != nil && ctx.Err() == nil {
			slog.Warn("etcd3: maintenance failed", "error", err)
		}
	}
}

func maintain(ctx context.Context, client *clientv3.Client, threshold float64) error {
	alarms, err := Alarms(ctx, client)
	if err != nil {
		return err
	}
	var noSpace []*etcdserverpb.AlarmMember
	for _, a := range alarms {
		if a.Alarm == etcdserverpb.AlarmType_NOSPACE {
			noSpace = append(noSpace, a)
		}
	}
	if len(noSpace) > 0 {
		return recoverSpace(ctx, client, noSpace)
	}
	for _, ep := range client.Endpoints() {
		if err := defragIfFragmented(ctx, client, ep, threshold); err != nil {
			return err
		}
	}
	return nil
}

// defragIfFragmented defragments the member at endpoint when at least
// threshold of its file is free.
func defragIfFragmented(ctx context.Context, client *clientv3.Client, endpoint string, threshold float64) error {
	st, err := status(ctx, client, endpoint)
	if err != nil {
		return err
	}
	free := st.DbSize - st.DbSizeInUse
	if st.DbSize <= 0 || float64(free) < threshold*float64(st.DbSize) {
		return nil
	}
	return defragment(ctx, client, endpoint, st.DbSize)
}

// recoverSpace is etcd's documented way out of NOSPACE: compact, defrag,
// disarm.
func recoverSpace(ctx context.Context, client *clientv3.Client, alarms []*etcdserverpb.AlarmMember) error {
	slog.Warn("etcd3: etcd's space quota is used up (NOSPACE): compacting its history, defragmenting and disarming the alarm")
	st, err := status(ctx, client, client.Endpoints()[0])
	if err != nil {
		return err
	}
	compactCtx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err = client.Compact(compactCtx, st.Header.Revision, clientv3.WithCompactPhysical())
	cancel()
	if err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("compacting at %d: %w", st.Header.Revision, err)
	}
	for _, ep := range client.Endpoints() {
		st, err := status(ctx, client, ep)
		if err != nil {
			return err
		}
		if err := defragment(ctx, client, ep, st.DbSize); err != nil {
			return err
		}
	}
	for _, a := range alarms {
		disarmCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := client.AlarmDisarm(disarmCtx, (*clientv3.AlarmMember)(a))
		cancel()
		if err != nil {
			return fmt.Errorf("disarming NOSPACE of member %x: %w", a.MemberID, err)
		}
	}
	slog.Info("etcd3: NOSPACE alarm disarmed")
	return nil
}

func defragment(ctx context.Context, client *clientv3.Client, endpoint string, before int64) error {
	ctx, cancel := context.WithTimeout(ctx, defragTimeout)
	defer cancel()
	start := time.Now()
	if _, err := client.Defragment(ctx, endpoint); err != nil {
		return fmt.Errorf("defragmenting %s: %w", endpoint, err)
	}
	st, err := status(ctx, client, endpoint)
	if err != nil {
		return err
	}
	slog.Info("etcd3: defragmented", "endpoint", endpoint, "bytesBefore", before, "bytesAfter", st.DbSize, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func status(ctx context.Context, client *clientv3.Client, endpoint string) (*clientv3.StatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := client.Status(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", endpoint, err)
	}
	return st, nil
}

// Alarms returns etcd's raised alarms (NOSPACE, CORRUPT), for maintenance
// and for readiness.
func Alarms(ctx context.Context, client *clientv3.Client) ([]*etcdserverpb.AlarmMember, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := client.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing etcd's alarms: %w", err)
	}
	return resp.Alarms, nil
}
