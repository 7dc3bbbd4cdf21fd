package endpointslice_test

import (
	"testing"

	"go.uber.org/goleak"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on endpoint slices.
func TestRegistry(t *testing.T) {
	t.Parallel()
	valid := func(name, address string) runtime.Object {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{address}}}}
	}
	info := registrytest.BuildGroup(t, endpointslice.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "endpointslices").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return valid(name, "10.0.0.1") },
		Invalid: func(name string) runtime.Object { return valid(name, "not an address") },
		Change: func(obj runtime.Object) {
			obj.(*discoveryv1.EndpointSlice).Endpoints[0].Addresses[0] = "10.0.0.2"
		},
		AllowUnconditionalUpdate: true,
	}
	tr.Run(t)
}
