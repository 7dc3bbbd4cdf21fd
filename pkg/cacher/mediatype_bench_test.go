package cacher_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/codec"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// BenchmarkStorageMediaType compares the stored media types
// (--storage-media-type) where they differ for this server: writes
// (create, update: an encoding more), and the reads that decode stored
// values (a LIST from etcd, the cache's first fill, the events the cache
// ingests); a LIST from the cache and the fan-out of an event serve the
// cache's JSON, whatever is stored. 10,000 ConfigMaps of 1 KiB.
func BenchmarkStorageMediaType(b *testing.B) {
	const n = 10000
	for _, mediaType := range []string{storage.MediaTypeJSON, storage.MediaTypeProtobuf} {
		b.Run("storage="+mediaType[len("application/"):], func(b *testing.B) {
			etcd := etcdtest.Start(b)
			c, err := codec.New(api.Scheme(), mediaType)
			if err != nil {
				b.Fatal(err)
			}
			prefix := "/registry/configmaps"
			cfg := configMapConfig(prefix)
			raw := etcd3.NewWithCodec(etcd.Client, cfg, nil, c)
			fillConfigMaps(b, raw, prefix, n, 1024)
			benchmarkStoredReads(b, raw, cfg, prefix, n)
			benchmarkStoredWrites(b, raw, prefix)
		})
	}
}

func benchmarkStoredReads(b *testing.B, raw storage.Interface, cfg storage.Config, prefix string, n int) {
	ctx := context.Background()
	b.Run("list-from-etcd", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := raw.GetList(ctx, prefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything}); err != nil || len(res.Items) != n {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache-fill", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := cacher.New(cacher.Config{Storage: raw, Resource: cfg})
			if err != nil {
				b.Fatal(err)
			}
			waitCached(b, c, prefix, n)
			c.Stop()
		}
	})
	c, err := cacher.New(cacher.Config{Storage: raw, Resource: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	waitCached(b, c, prefix, n)
	b.Run("list-from-cache", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.GetList(ctx, prefix, storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything})
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 64*1024)
			for _, item := range res.Items {
				if buf = item.AppendJSON(buf, false); len(buf) > 32*1024 {
					io.Discard.Write(buf)
					buf = buf[:0]
				}
			}
		}
	})
	b.Run("update-fanout-100", func(b *testing.B) { benchmarkFanout(b, raw, c, prefix, 100) })
}

// benchmarkFanout: an update written to etcd, decoded by the cache's
// reflector and received by each of watchers.
func benchmarkFanout(b *testing.B, raw storage.Interface, c *cacher.Cacher, prefix string, watchers int) {
	ctx := context.Background()
	received := make(chan struct{}, watchers*4)
	for range watchers {
		w, err := c.Watch(ctx, prefix, storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything, SendInitialEvents: ptrFalse()})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		go func() {
			for {
				if _, status := storage.NextEvent(ctx, w, true); status != storage.Got {
					return
				}
				received <- struct{}{}
			}
		}()
	}
	key := prefix + "/bench/bench-0"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := raw.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in k8sruntime.Object, _ storage.ResponseMeta) (k8sruntime.Object, *uint64, error) {
			cm := in.(*corev1.ConfigMap)
			cm.Labels["n"] = fmt.Sprint(i)
			return cm, nil, nil
		}, nil); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			<-received
		}
	}
}

func benchmarkStoredWrites(b *testing.B, raw storage.Interface, prefix string) {
	i := 0
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			i++
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}}
			cm.Name, cm.Namespace = fmt.Sprintf("new-%d", i), "bench"
			cm.Labels = map[string]string{"bucket": "1"}
			cm.Data = map[string]string{"data": strings.Repeat("x", 1024)}
			if err := raw.Create(context.Background(), fmt.Sprintf("%s/bench/new-%d", prefix, i), cm, &corev1.ConfigMap{}, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
