package etcd3_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func TestConformance(t *testing.T) {
	etcd := etcdtest.Start(t)
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T, cfg storage.Config) storage.Interface {
			return etcd3.New(etcd.Client, cfg)
		},
		Compact: func(t *testing.T, rev int64) { etcd.Compact(rev) },
	})
}
