package registrytest

import (
	"path"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// NewGetter starts an etcd of t's own (stopped when t ends) and returns
// the options of raw etcd3 storage on it, without watch cache, each
// resource under /registry/<group>/<resource> (/registry/<resource> in
// the core group).
func NewGetter(t testing.TB) generic.RESTOptionsGetter {
	t.Helper()
	etcd := etcdtest.Start(t)
	return getter{generic.RESTOptions{StorageFactory: etcd3.NewFactory(etcd.Client), Decorator: generic.UndecoratedStorage}}
}

type getter struct{ opts generic.RESTOptions }

func (g getter) GetRESTOptions(gr schema.GroupResource) (generic.RESTOptions, error) {
	o := g.opts
	// A clean path: the Store cleans the keys of cluster-scoped objects
	// (path.Join), not the prefix it lists.
	o.ResourcePrefix = path.Join("/registry", gr.Group, gr.Resource)
	return o, nil
}

// BuildGroup builds p's group over a new etcd of t's own (NewGetter) and
// destroys it when t ends; a build error fails t. Its resources are in
// VersionedResourcesStorageMap[version][path].
func BuildGroup(t testing.TB, p generic.RESTStorageProvider) rest.APIGroupInfo {
	t.Helper()
	info, err := p.NewRESTStorage(NewGetter(t))
	if err != nil {
		t.Fatalf("registrytest: building the %q group: %v", p.GroupName(), err)
	}
	t.Cleanup(info.Destroy)
	return info
}

// Storage returns the storage of path (a resource, "pods", or a
// subresource, "pods/status") in info's preferred version; it fails t
// when the group does not serve it.
func Storage(t testing.TB, info rest.APIGroupInfo, path string) rest.Storage {
	t.Helper()
	s, ok := info.VersionedResourcesStorageMap[info.PrioritizedVersions[0]][path]
	if !ok {
		t.Fatalf("registrytest: group %q serves no %s", info.GroupName, path)
	}
	return s
}

// Case is one resource of a group that RunGroup checks: Tester returns
// its Tester over the group's storage, with Storage left for RunGroup to
// set to Resource's.
type Case struct {
	Resource string
	Tester   func(t *testing.T, info rest.APIGroupInfo) Tester
}

// RunGroup runs each case's Tester on its resource, as a parallel subtest
// named after it, over a group of its own built by p: the cases share no
// objects.
func RunGroup(t *testing.T, p generic.RESTStorageProvider, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Resource, func(t *testing.T) {
			t.Parallel()
			info := BuildGroup(t, p)
			tr := c.Tester(t, info)
			tr.Storage = Storage(t, info, c.Resource).(ResourceStorage)
			tr.Run(t)
		})
	}
}

// StatusStorage returns the status subresource of resource in info's
// preferred version; it fails t when the group does not serve one.
func StatusStorage(t testing.TB, info rest.APIGroupInfo, resource string) rest.Updater {
	t.Helper()
	u, ok := Storage(t, info, resource+"/status").(rest.Updater)
	if !ok {
		t.Fatalf("registrytest: %s/status of group %q does not update", resource, info.GroupName)
	}
	return u
}
