package etcd3

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// The size of etcd's database, asked of a member at each scrape as kube
// does: apiserver_storage_size_bytes is kube's (name, help and label), the
// size in use (what a defragmentation would shrink the file to) is ours.
var (
	sizeDesc = prometheus.NewDesc("apiserver_storage_size_bytes",
		"Size of the storage database file physically allocated in bytes.", []string{"storage_cluster_id"}, nil)
	sizeInUseDesc = prometheus.NewDesc("miniapiserver_storage_size_in_use_bytes",
		"Size of the storage database in use in bytes: the rest of the file is free, and given back by a defragmentation.",
		[]string{"storage_cluster_id"}, nil)
)

// SizeCollector asks every monitored etcd of a server for its size when
// scraped.
type SizeCollector struct {
	mu      sync.Mutex
	clients []*clientv3.Client
}

// NewSizeCollector is a server's collector of its etcds' sizes,
// registered with reg (nil: registered nowhere).
func NewSizeCollector(reg prometheus.Registerer) *SizeCollector {
	c := &SizeCollector{}
	metrics.Register(reg, c)
	return c
}

// MonitorSize reports the size of client's etcd until the returned func
// is called. The etcds of one server (--etcd-servers-overrides) are told
// apart as kube tells its etcd clusters apart: etcd-0, etcd-1...
func (sizes *SizeCollector) MonitorSize(client *clientv3.Client) (stop func()) {
	sizes.mu.Lock()
	defer sizes.mu.Unlock()
	sizes.clients = append(sizes.clients, client)
	return func() {
		sizes.mu.Lock()
		defer sizes.mu.Unlock()
		for i, c := range sizes.clients {
			if c == client {
				sizes.clients = append(sizes.clients[:i], sizes.clients[i+1:]...)
				return
			}
		}
	}
}

func (c *SizeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sizeDesc
	ch <- sizeInUseDesc
}

// Collect asks one member (at random, as kube) of each etcd, for at most
// a second; an etcd that does not answer is left out of this scrape.
func (c *SizeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	clients := append([]*clientv3.Client(nil), c.clients...)
	c.mu.Unlock()
	for i, client := range clients {
		endpoints := client.Endpoints()
		if len(endpoints) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := client.Status(ctx, endpoints[rand.IntN(len(endpoints))])
		cancel()
		if err != nil {
			continue
		}
		id := fmt.Sprintf("etcd-%d", i)
		ch <- prometheus.MustNewConstMetric(sizeDesc, prometheus.GaugeValue, float64(st.DbSize), id)
		ch <- prometheus.MustNewConstMetric(sizeInUseDesc, prometheus.GaugeValue, float64(st.DbSizeInUse), id)
	}
}
