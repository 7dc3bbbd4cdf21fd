package versions

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	clientv3 "go.etcd.io/etcd/client/v3"
)

var eventTime = metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC))

func coreEvent(ns, name string) *corev1.Event {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p", FieldPath: "spec.containers{c}"},
		Reason:         "Started", Message: "Started container", Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "kubelet", Host: "node1"},
		FirstTimestamp: at, LastTimestamp: at, Count: 3,
	}
}

func newEvent(ns, name string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		EventTime:  eventTime, ReportingController: "example.com/ctl", ReportingInstance: "i-1",
		Action: "Do", Reason: "Done", Note: "it is done", Type: corev1.EventTypeWarning,
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "q"},
		Series:    &eventsv1.EventSeries{Count: 2, LastObservedTime: eventTime},
	}
}

// Core events read through events.k8s.io and the other way round: the
// same objects, renamed fields.
func TestEventsAcrossGroups(t *testing.T) {
	t.Parallel()
	inEachEncoding(t, func(t *testing.T, cs kubernetes.Interface, ns string) {
		core, ev := cs.CoreV1().Events(ns), cs.EventsV1().Events(ns)

		if _, err := core.Create(ctx(t), coreEvent(ns, "old"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := ev.Get(ctx(t), "old", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Regarding.Name != "p" || got.Note != "Started container" || got.DeprecatedSource.Host != "node1" || got.DeprecatedCount != 3 ||
			got.DeprecatedFirstTimestamp.IsZero() || got.Reason != "Started" {
			t.Errorf("a core event at events.k8s.io/v1: %+v", got)
		}

		if _, err := ev.Create(ctx(t), newEvent(ns, "new"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		back, err := core.Get(ctx(t), "new", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if back.InvolvedObject.Name != "q" || back.Message != "it is done" || back.ReportingController != "example.com/ctl" ||
			back.Series == nil || back.Series.Count != 2 || !back.EventTime.Equal(&eventTime) {
			t.Errorf("an events.k8s.io event at core v1: %+v", back)
		}

		// The series of an event moves through either group.
		got, err = ev.Get(ctx(t), "new", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Series.Count = 5
		if _, err := ev.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if back, err = core.Get(ctx(t), "new", metav1.GetOptions{}); err != nil || back.Series.Count != 5 {
			t.Errorf("after the update at events.k8s.io/v1: %v %+v", err, back.Series)
		}

		_, err = ev.Get(ctx(t), "missing", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || err.Error() != `events.events.k8s.io "missing" not found` {
			t.Errorf("not found at events.k8s.io/v1: %v", err)
		}
	})
}

// Each group selects on its own field names, refusing the other's with
// kube's message.
func TestEventsFieldSelectors(t *testing.T) {
	t.Parallel()
	cs := clientset(t, encodings[0].contentType)
	ns := srv.CreateNamespace(t)
	core, ev := cs.CoreV1().Events(ns), cs.EventsV1().Events(ns)
	if _, err := core.Create(ctx(t), coreEvent(ns, "old"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Create(ctx(t), newEvent(ns, "new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		selector string
		want     string // the one name listed
	}{
		{"regarding.name=q", "new"},
		{"reportingController=example.com/ctl", "new"},
		{"type=Normal", "old"},
		{"regarding.kind=Pod,reason=Started", "old"},
		{"metadata.name=new", "new"},
	} {
		list, err := ev.List(ctx(t), metav1.ListOptions{FieldSelector: tc.selector})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != tc.want {
			t.Errorf("events.k8s.io %s: %v %+v", tc.selector, err, list)
		}
	}
	for _, tc := range []struct{ selector, want string }{
		{"involvedObject.name=q", "new"},
		{"reportingComponent=example.com/ctl", "new"},
		{"source=kubelet", "old"},
		{"source=example.com/ctl", "new"},
	} {
		list, err := core.List(ctx(t), metav1.ListOptions{FieldSelector: tc.selector})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != tc.want {
			t.Errorf("core %s: %v %+v", tc.selector, err, list)
		}
	}
	if _, err := ev.List(ctx(t), metav1.ListOptions{FieldSelector: "source=kubelet"}); !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: source" {
		t.Errorf("source at events.k8s.io: %v", err)
	}
	if _, err := core.List(ctx(t), metav1.ListOptions{FieldSelector: "regarding.name=q"}); !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: regarding.name" {
		t.Errorf("regarding.name at core: %v", err)
	}
}

// events.k8s.io/v1 validates more than core v1; the messages name the
// stored fields, as kube's (recorded from kube-apiserver v1.37.2).
func TestEventsValidation(t *testing.T) {
	t.Parallel()
	cs := clientset(t, encodings[1].contentType)
	ns := srv.CreateNamespace(t)
	ev := cs.EventsV1().Events(ns)
	for _, tc := range []struct {
		name   string
		change func(*eventsv1.Event)
		want   string
	}{
		{"no-time", func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} },
			`Event "no-time" is invalid: eventTime: Required value`},
		{"bad-type", func(e *eventsv1.Event) { e.Type = "Odd" },
			`Event "bad-type" is invalid: type: Invalid value: "": has invalid value: Odd`},
		{"deprecated", func(e *eventsv1.Event) { e.DeprecatedSource.Component, e.DeprecatedCount = "x", 2 },
			`Event "deprecated" is invalid: [count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]`},
		{"series", func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 1} },
			`Event "series" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value]`},
	} {
		e := newEvent(ns, tc.name)
		tc.change(e)
		_, err := ev.Create(ctx(t), e, metav1.CreateOptions{})
		var status apierrors.APIStatus
		if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Message != tc.want || status.Status().Details.Group != "" {
			t.Errorf("%s: got %v, want %s (in the core group, as kube names it)", tc.name, err, tc.want)
		}
	}
	// Core v1 takes what events.k8s.io refuses: an event of the old API.
	old := coreEvent(ns, "old-style")
	old.Type = "Odd"
	if _, err := cs.CoreV1().Events(ns).Create(ctx(t), old, metav1.CreateOptions{}); err != nil {
		t.Errorf("core v1: %v", err)
	}
}

// Watchers of both groups at once each get the event in their group.
func TestEventsWatchBothGroups(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	pb, js := clientset(t, encodings[0].contentType), clientset(t, encodings[1].contentType)
	watchers := map[string]watch.Interface{}
	for name, open := range map[string]func() (watch.Interface, error){
		"core protobuf":   func() (watch.Interface, error) { return pb.CoreV1().Events(ns).Watch(ctx(t), metav1.ListOptions{}) },
		"events protobuf": func() (watch.Interface, error) { return pb.EventsV1().Events(ns).Watch(ctx(t), metav1.ListOptions{}) },
		"events json": func() (watch.Interface, error) {
			return js.EventsV1().Events(ns).Watch(ctx(t), metav1.ListOptions{FieldSelector: "regarding.name=q"})
		},
	} {
		w, err := open()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer w.Stop()
		watchers[name] = w
	}
	if _, err := js.EventsV1().Events(ns).Create(ctx(t), newEvent(ns, "w"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, w := range watchers {
		ev := next(t, name, w)
		switch obj := ev.Object.(type) {
		case *corev1.Event:
			if name != "core protobuf" || ev.Type != watch.Added || obj.Message != "it is done" {
				t.Errorf("%s: %s %+v", name, ev.Type, obj)
			}
		case *eventsv1.Event:
			if name == "core protobuf" || ev.Type != watch.Added || obj.Note != "it is done" {
				t.Errorf("%s: %s %+v", name, ev.Type, obj)
			}
		default:
			t.Errorf("%s: %s of a %T", name, ev.Type, ev.Object)
		}
	}
}

// An event written through events.k8s.io lives --event-ttl, as one
// written in the core group: the same store.
func TestEventsTTL(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	if _, err := clientset(t, encodings[0].contentType).EventsV1().Events(ns).Create(ctx(t), newEvent(ns, "ttl"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Server.EtcdURL}, TLS: srv.Server.EtcdTLS, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	resp, err := etcd.Get(ctx(t), "/registry/events/"+ns+"/ttl")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("event key: %v %+v", err, resp)
	}
	lease, err := etcd.TimeToLive(ctx(t), clientv3.LeaseID(resp.Kvs[0].Lease))
	// The lease may be shared by the events of up to a minute more.
	if ttl := time.Duration(lease.GrantedTTL) * time.Second; err != nil || ttl < eventTTL || ttl > eventTTL+time.Minute {
		t.Errorf("event lease: %v, granted %ds, want %v", err, lease.GrantedTTL, eventTTL)
	}
}
