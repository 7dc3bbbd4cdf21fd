package apiregistration_test

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// apiService is an APIService for a group made from name: an APIService
// is named <version>.<group>, so its name follows from its spec (and
// cannot be generated). A name already of that form is kept.
func apiService(name string, priority int32) *apiregistrationv1.APIService {
	group := strings.TrimPrefix(name, "v1.")
	if group == name {
		group = name + ".example.com"
	}
	return &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1." + group},
		Spec: apiregistrationv1.APIServiceSpec{Group: group, Version: "v1", GroupPriorityMinimum: 100, VersionPriority: priority,
			InsecureSkipTLSVerify: true,
			Service:               &apiregistrationv1.ServiceReference{Namespace: "default", Name: "api", Port: ptr.To[int32](443)}}}
}

// TestRegistry runs the registry's conformance suite on API services,
// with their status subresource.
func TestRegistry(t *testing.T) {
	t.Parallel()
	as := func(obj runtime.Object) *apiregistrationv1.APIService { return obj.(*apiregistrationv1.APIService) }
	stamp := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	info := registrytest.BuildGroup(t, apiregistration.NewRESTStorageProvider())
	tr := registrytest.Tester{
		Storage:        registrytest.Storage(t, info, "apiservices").(registrytest.ResourceStorage),
		Valid:          func(name string) runtime.Object { return apiService(name, 10) },
		Invalid:        func(name string) runtime.Object { return apiService(name, 0) },
		Change:         func(obj runtime.Object) { as(obj).Spec.VersionPriority = 20 },
		NoGenerateName: true,
		Status: &registrytest.StatusCheck{
			Storage:    registrytest.StatusStorage(t, info, "apiservices"),
			ChangeSpec: func(obj runtime.Object) { as(obj).Spec.VersionPriority = 30 },
			ChangeStatus: func(obj runtime.Object) {
				as(obj).Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available,
					Status: apiregistrationv1.ConditionTrue, Reason: "Registrytest", LastTransitionTime: stamp}}
			},
		},
	}
	tr.Run(t)
}
