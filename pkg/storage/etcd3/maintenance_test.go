package etcd3_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestMaintenanceDefragments: once compaction has freed most of the
// database file, maintenance defragments it and the file shrinks.
func TestMaintenanceDefragments(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	value := strings.Repeat("x", 32<<10)
	for i := range 200 {
		if _, err := etcd.Client.Put(ctx, fmt.Sprintf("/k/%d", i%10), value); err != nil {
			t.Fatal(err)
		}
	}
	st, err := etcd.Client.Status(ctx, etcd.URL())
	if err != nil {
		t.Fatal(err)
	}
	etcd.Compact(st.Header.Revision)
	grown := st.DbSize

	done := make(chan struct{})
	go func() {
		defer close(done)
		etcd3.RunMaintenance(ctx, etcd.Client, etcd3.MaintenanceConfig{Interval: 50 * time.Millisecond, DefragThreshold: 0.5})
	}()
	defer func() { cancel(); <-done }()
	for {
		// etcd counts the space in use when it commits: the pages the
		// compaction freed show after a later write, as on a live server.
		if _, err := etcd.Client.Put(ctx, "/tick", "t"); err != nil {
			t.Fatal(err)
		}
		st, err := etcd.Client.Status(ctx, etcd.URL())
		if err != nil {
			t.Fatal(err)
		}
		if st.DbSize < grown/2 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the database stayed at %d bytes (%d in use)", st.DbSize, st.DbSizeInUse)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
