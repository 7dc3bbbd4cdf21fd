package events_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/events"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestRegistry runs the registry's conformance suite on events.k8s.io's
// events, a view of the core group's events store (built first, as the
// server builds it).
func TestRegistry(t *testing.T) {
	t.Parallel()
	legacy, coreInfo, err := core.RESTStorageProvider{NoPodServiceAccount: true}.NewGroupStorage(registrytest.NewGetter(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coreInfo.Destroy)
	info := registrytest.BuildGroup(t, events.RESTStorageProvider{Events: legacy.Events})
	valid := func(name, action string) runtime.Object {
		return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
			EventTime:           metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "pod-1"},
			ReportingController: "example.com/registrytest", ReportingInstance: "registrytest-1",
			Action: action, Reason: "Created", Type: corev1.EventTypeNormal}
	}
	tr := registrytest.Tester{
		Storage: registrytest.Storage(t, info, "events").(registrytest.ResourceStorage),
		Valid:   func(name string) runtime.Object { return valid(name, "Create") },
		Invalid: func(name string) runtime.Object { return valid(name, "") },
		// Updates through events.k8s.io keep what kube makes immutable
		// (the note among it): the update cases change a label.
		AllowCreateOnUpdate:      true,
		AllowUnconditionalUpdate: true,
	}
	tr.Run(t)
}
