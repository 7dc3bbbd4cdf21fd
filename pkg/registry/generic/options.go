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
	// Metrics are the server's registry metrics, where the object count
	// is recorded (nil: nowhere read).
	Metrics *Metrics
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

// UndecoratedRESTOptions gives every resource a raw store from Factory
// (UndecoratedStorage: no watch cache), under Prefix/<resource>: for tools
// and tests that build stores without the server's flags.
type UndecoratedRESTOptions struct {
	Factory storage.Factory
	Prefix  string
}

// GetRESTOptions implements RESTOptionsGetter.
func (o UndecoratedRESTOptions) GetRESTOptions(gr schema.GroupResource) (RESTOptions, error) {
	return RESTOptions{StorageFactory: o.Factory, Decorator: UndecoratedStorage, ResourcePrefix: o.Prefix + "/" + gr.Resource}, nil
}

// RESTStorageProvider builds the storage of one API group.
type RESTStorageProvider interface {
	GroupName() string
	NewRESTStorage(getter RESTOptionsGetter) (rest.APIGroupInfo, error)
}
