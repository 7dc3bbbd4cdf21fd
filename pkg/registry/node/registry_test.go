package node_test

import (
	"testing"

	"go.uber.org/goleak"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on runtime classes,
// which kube lets a PUT create but never update without a
// resourceVersion.
func TestRegistry(t *testing.T) {
	t.Parallel()
	valid := func(name, handler string) runtime.Object {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
	}
	info := registrytest.BuildGroup(t, node.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage:             registrytest.Storage(t, info, "runtimeclasses").(registrytest.ResourceStorage),
		Valid:               func(name string) runtime.Object { return valid(name, "runc") },
		Invalid:             func(name string) runtime.Object { return valid(name, "Not A Handler!") },
		AllowCreateOnUpdate: true,
	}
	tr.Run(t)
}
