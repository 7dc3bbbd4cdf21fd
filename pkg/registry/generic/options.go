package generic

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// RESTOptions is what building one resource's store needs.
type RESTOptions struct {
	// StorageFactory builds the raw store (etcd3) of a storage.Config.
	StorageFactory storage.Factory
	// Decorator wraps the raw store: StorageWithCacher, or
	// UndecoratedStorage when the watch cache is off for the resource.
	Decorator storage.Decorator
	// ResourcePrefix is the key prefix of the resource
	// ("/registry/configmaps").
	ResourcePrefix string
	// CountMetricPollPeriod is how often the object count metric is
	// refreshed (0: never).
	CountMetricPollPeriod time.Duration
}

// RESTOptionsGetter returns the RESTOptions of a resource. cmd implements
// it from the flags (--etcd-prefix, --watch-cache, --watch-cache-sizes).
type RESTOptionsGetter interface {
	GetRESTOptions(resource schema.GroupResource) (RESTOptions, error)
}

// UndecoratedStorage is the Decorator that returns the raw store as is:
// every read goes to etcd.
func UndecoratedStorage(raw storage.Factory, cfg storage.Config) (storage.Interface, storage.DestroyFunc, error) {
	return raw(cfg)
}

// RESTStorageProvider builds the storage of one API group.
type RESTStorageProvider interface {
	GroupName() string
	NewRESTStorage(getter RESTOptionsGetter) (rest.APIGroupInfo, error)
}
