package clientgo

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

// eventsAbout lists the core/v1 events of ns about the object named name.
func eventsAbout(t *testing.T, ns, name string) []corev1.Event {
	t.Helper()
	list, err := clientset(t).CoreV1().Events(ns).List(ctx(t), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestEventRecorder records events with client-go's record package, as
// controllers do: the broadcaster writes core/v1 Events through its
// sink, and a repeated event is counted on the same Event (a PATCH).
func TestEventRecorder(t *testing.T) {
	ns := namespace(t)
	cs := clientset(t)
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	broadcaster := record.NewBroadcaster()
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "clientgo-test", Host: "test-host"})

	recorder.Event(cm, corev1.EventTypeNormal, "Tested", "recorded once")
	waitFor(t, "the event", func() bool { return len(eventsAbout(t, ns, "subject")) == 1 })
	for i := 0; i < 2; i++ {
		recorder.Event(cm, corev1.EventTypeNormal, "Tested", "recorded once")
	}
	waitFor(t, "the count of the repeated event", func() bool {
		evs := eventsAbout(t, ns, "subject")
		return len(evs) == 1 && evs[0].Count == 3
	})
	recorder.Eventf(cm, corev1.EventTypeWarning, "Failed", "failed %d times", 2)
	waitFor(t, "a second event", func() bool { return len(eventsAbout(t, ns, "subject")) == 2 })
	for _, ev := range eventsAbout(t, ns, "subject") {
		ref := ev.InvolvedObject
		if ref.Kind != "ConfigMap" || ref.APIVersion != "v1" || ref.UID != cm.UID || ref.Namespace != ns ||
			ev.Source.Component != "clientgo-test" || ev.Source.Host != "test-host" || ev.FirstTimestamp.IsZero() || ev.LastTimestamp.IsZero() {
			t.Errorf("event %+v", ev)
		}
		switch ev.Reason {
		case "Tested":
			if ev.Type != corev1.EventTypeNormal || ev.Message != "recorded once" || ev.Count != 3 {
				t.Errorf("Tested: %+v", ev)
			}
		case "Failed":
			if ev.Type != corev1.EventTypeWarning || ev.Message != "failed 2 times" || ev.Count != 1 {
				t.Errorf("Failed: %+v", ev)
			}
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
}

// TestEventBroadcasterAdapter uses the events library of newer
// controllers: it finds events.k8s.io/v1 in discovery and records through
// it; the events read back as core/v1 Events.
func TestEventBroadcasterAdapter(t *testing.T) {
	ns := namespace(t)
	cs := clientset(t)
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	adapter := events.NewEventBroadcasterAdapterWithContext(ctx(t), cs)
	stop := make(chan struct{})
	defer func() { close(stop); adapter.Shutdown() }()
	adapter.StartRecordingToSink(stop)
	recorder := adapter.NewRecorder("clientgo-adapter")
	recorder.Eventf(cm, nil, corev1.EventTypeNormal, "Adapted", "Testing", "recorded by the %s", "adapter")
	waitFor(t, "the event", func() bool { return len(eventsAbout(t, ns, "subject")) == 1 })
	ev := eventsAbout(t, ns, "subject")[0]
	if ev.Reason != "Adapted" || ev.Message != "recorded by the adapter" || ev.ReportingController != "clientgo-adapter" || ev.Action != "Testing" ||
		ev.EventTime.IsZero() || ev.InvolvedObject.UID != cm.UID || len(ev.ManagedFields) != 1 || ev.ManagedFields[0].APIVersion != "events.k8s.io/v1" {
		t.Errorf("event %+v", ev)
	}
}
