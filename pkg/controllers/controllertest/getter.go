// Package controllertest gives the controllers' tests real storage: the
// registry's options over an etcd of the test's own (it wires etcd3 into
// the registry, as cmd does). Tests only.
package controllertest

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// NewGetter starts an etcd for t (stopped when t ends) and returns the
// options of storage on it, without watch cache, each resource under
// /registry/<group>/<resource>.
func NewGetter(t testing.TB) generic.RESTOptionsGetter {
	t.Helper()
	etcd := etcdtest.Start(t)
	return getter{generic.RESTOptions{StorageFactory: etcd3.NewFactory(etcd.Client), Decorator: generic.UndecoratedStorage}}
}

type getter struct{ opts generic.RESTOptions }

func (g getter) GetRESTOptions(gr schema.GroupResource) (generic.RESTOptions, error) {
	o := g.opts
	o.ResourcePrefix = "/registry/" + gr.Group + "/" + gr.Resource
	return o, nil
}
