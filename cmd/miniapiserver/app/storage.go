package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

// builtStorage is what the groups' storage is built on: the etcd clients,
// the options each resource's storage is built with, and etcd's checks
// (etcdHealth of /healthz, /livez and /readyz; etcdReady of /readyz).
type builtStorage struct {
	clients               etcdClients
	getter                *restOptionsGetter
	etcdHealth, etcdReady []healthz.Check
}

// buildStorage is the part of Start that connects to etcd (starting the
// embedded one without --etcd-servers) and makes the storage factories.
func (s *Server) buildStorage(o *Options) (*builtStorage, error) {
	clients, err := s.connectEtcd(o)
	if err != nil {
		return nil, err
	}
	factories, err := newStorageFactories(s.loops.ctx, o, clients)
	if err != nil {
		return nil, err
	}
	b := &builtStorage{clients: clients, getter: &restOptionsGetter{
		factories:   factories,
		prefix:      o.EtcdPrefix,
		countPeriod: o.EtcdClient.CountMetricPollPeriod,
		metrics:     generic.NewMetrics(s.metrics),
		seen:        map[string]bool{},
		decorator:   decoratorFor(o, cacher.NewMetrics(s.metrics)),
	}}
	b.etcdHealth, b.etcdReady = etcdChecks(o, clients)
	return b, nil
}

// restOptionsGetter gives each resource its key prefix and its Decorator.
type restOptionsGetter struct {
	factories storageFactories
	prefix    string
	// countPeriod is --etcd-count-metric-poll-period; metrics are the
	// server's registry metrics, where the stores count.
	countPeriod time.Duration
	metrics     *generic.Metrics
	// decorator picks the Decorator of a resource from its name
	// ("deployments.apps").
	decorator func(resource string) storage.Decorator
	// seen records every resource asked for, to check flags naming
	// resources against what is served.
	seen map[string]bool
}

var _ generic.RESTOptionsGetter = (*restOptionsGetter)(nil)

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g *restOptionsGetter) GetRESTOptions(gr schema.GroupResource) (generic.RESTOptions, error) {
	name := gr.String()
	g.seen[name] = true
	factory, ok := g.factories.byResource[gr]
	if !ok {
		factory = g.factories.main
	}
	return generic.RESTOptions{
		StorageFactory:        factory,
		Decorator:             g.decorator(name),
		ResourcePrefix:        ResourcePrefix(g.prefix, gr),
		CountMetricPollPeriod: g.countPeriod,
		Metrics:               g.metrics,
	}, nil
}

// checkResources returns an error naming the first of names that no
// served resource has. A name in a group no built-in resource has may be
// a custom resource's, defined later: it is accepted.
func (g *restOptionsGetter) checkResources(flag string, names []string) error {
	groups := map[string]bool{}
	for n := range g.seen {
		_, group, _ := strings.Cut(n, ".")
		groups[group] = true
	}
	sort.Strings(names)
	for _, n := range names {
		if _, group, _ := strings.Cut(n, "."); !g.seen[n] && groups[group] {
			return fmt.Errorf("%s: entry %q: no such resource is served", flag, n)
		}
	}
	return nil
}

// storageFactories build the raw etcd3 stores: main's on the main etcd,
// and those of the resources of --etcd-servers-overrides on theirs.
type storageFactories struct {
	main       storage.Factory
	byResource map[schema.GroupResource]storage.Factory
}

// newStorageFactories makes the factories of clients, storing values in
// the media type of --storage-media-type and encrypting those of the
// resources --encryption-provider-config names (on whichever etcd they
// are). It first moves what an earlier version of this server stored on
// the main etcd at other keys than kube-apiserver's.
func newStorageFactories(ctx context.Context, o *Options, clients etcdClients) (storageFactories, error) {
	codecs, err := storageCodecs(o.StorageMediaType)
	if err != nil {
		return storageFactories{}, fmt.Errorf("--storage-media-type: %w", err)
	}
	transformers := func(schema.GroupResource) value.Transformer { return value.Identity }
	if o.EncryptionProviderConfig != "" {
		loaded, err := value.LoadConfig(o.EncryptionProviderConfig)
		if err != nil {
			return storageFactories{}, fmt.Errorf("--encryption-provider-config: %w", err)
		}
		transformers = loaded.For
	}
	if err := moveToKubeKeys(ctx, clients.main, o.EtcdPrefix, transformers); err != nil {
		return storageFactories{}, err
	}
	opts := []etcd3.Option{etcd3.WithTransformers(transformers), etcd3.WithCodecs(codecs), etcd3.WithLeaseReuse(o.Kube.Misc.LeaseReuseDuration)}
	f := storageFactories{main: etcd3.NewFactory(clients.main, opts...), byResource: map[schema.GroupResource]storage.Factory{}}
	byClient := map[*clientv3.Client]storage.Factory{}
	for gr, c := range clients.byResource {
		if byClient[c] == nil {
			byClient[c] = etcd3.NewFactory(c, opts...)
		}
		f.byResource[gr] = byClient[c]
	}
	return f, nil
}

// watchCacheSizeNames are the resources of --watch-cache-sizes, to check
// they are served.
func watchCacheSizeNames(o *Options) []string {
	sizes, _ := parseWatchCacheSizes(o.WatchCacheSizes) // validated already
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	return names
}

// overriddenNames are the resources of --etcd-servers-overrides, named as
// --watch-cache-sizes names them, to check they are served.
func overriddenNames(o *Options) []string {
	overrides, _ := parseEtcdOverrides(o.EtcdClient.ServersOverrides) // validated already
	names := make([]string, 0, len(overrides))
	for _, ov := range overrides {
		names = append(names, ov.Resource.String())
	}
	return names
}

// customResourceOptions gives custom resources kube's key layout,
// <prefix>/<group>/<plural>, and the watch cache the flags choose for
// "<plural>.<group>". Unlike the built-in resources', they are asked for
// while the server runs: nothing is recorded.
type customResourceOptions struct{ g *restOptionsGetter }

var _ generic.RESTOptionsGetter = customResourceOptions{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (o customResourceOptions) GetRESTOptions(gr schema.GroupResource) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageFactory:        o.g.factories.main,
		Decorator:             o.g.decorator(gr.String()),
		ResourcePrefix:        o.g.prefix + "/" + gr.Group + "/" + gr.Resource,
		CountMetricPollPeriod: o.g.countPeriod,
		Metrics:               o.g.metrics,
	}, nil
}

// decoratorFor chooses each resource's Decorator from the flags: the watch
// cache (sized by --watch-cache-sizes, self-sizing otherwise) unless
// --watch-cache=false or a size of 0 turns it off. The caches share one
// budget for the encodings their objects remember
// (--watch-cache-encoding-budget); each bounds its history's bytes by
// --watch-cache-history-bytes. The caches record in m, the server's.
func decoratorFor(o *Options, m *cacher.Metrics) func(resource string) storage.Decorator {
	sizes, _ := parseWatchCacheSizes(o.WatchCacheSizes) // validated already
	var budget *storage.EncodingBudget
	if o.WatchCacheEncodingBudget > 0 {
		budget = storage.NewEncodingBudget(o.WatchCacheEncodingBudget)
	}
	return func(resource string) storage.Decorator {
		size, sized := sizes[resource]
		if !o.WatchCache || (sized && size == 0) {
			return generic.UndecoratedStorage
		}
		return cacher.StorageWithCacher(cacher.Config{Capacity: size, HistoryBytes: o.WatchCacheHistoryBytes, EncodingBudget: budget, Metrics: m})
	}
}
