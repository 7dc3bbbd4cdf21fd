package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

// restOptionsGetter gives each resource its key prefix and its Decorator.
type restOptionsGetter struct {
	factory storage.Factory
	prefix  string
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
	return generic.RESTOptions{
		StorageFactory: g.factory,
		Decorator:      g.decorator(name),
		ResourcePrefix: ResourcePrefix(g.prefix, gr),
		// kube's --etcd-count-metric-poll-period default.
		CountMetricPollPeriod: time.Minute,
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

// storageFactory builds the raw etcd3 stores, storing values in the media
// type of --storage-media-type and encrypting those of the resources
// --encryption-provider-config names. It first moves what an earlier
// version of this server stored at other keys than kube-apiserver's.
func storageFactory(ctx context.Context, o *Options, client *clientv3.Client) (storage.Factory, error) {
	codecs, err := storageCodecs(o.StorageMediaType)
	if err != nil {
		return nil, fmt.Errorf("--storage-media-type: %w", err)
	}
	transformers := func(schema.GroupResource) value.Transformer { return value.Identity }
	if o.EncryptionProviderConfig != "" {
		loaded, err := value.LoadConfig(o.EncryptionProviderConfig)
		if err != nil {
			return nil, fmt.Errorf("--encryption-provider-config: %w", err)
		}
		transformers = loaded.For
	}
	if err := moveToKubeKeys(ctx, client, o.EtcdPrefix, transformers); err != nil {
		return nil, err
	}
	return etcd3.NewFactory(client, etcd3.WithTransformers(transformers), etcd3.WithCodecs(codecs)), nil
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
		StorageFactory:        o.g.factory,
		Decorator:             o.g.decorator(gr.String()),
		ResourcePrefix:        o.g.prefix + "/" + gr.Group + "/" + gr.Resource,
		CountMetricPollPeriod: time.Minute,
	}, nil
}

// decoratorFor chooses each resource's Decorator from the flags: the watch
// cache (sized by --watch-cache-sizes, self-sizing otherwise) unless
// --watch-cache=false or a size of 0 turns it off. The caches share one
// budget for the encodings their objects remember
// (--watch-cache-encoding-budget); each bounds its history's bytes by
// --watch-cache-history-bytes.
func decoratorFor(o *Options) func(resource string) storage.Decorator {
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
		return cacher.StorageWithCacher(cacher.Config{Capacity: size, HistoryBytes: o.WatchCacheHistoryBytes, EncodingBudget: budget})
	}
}
