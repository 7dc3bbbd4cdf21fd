package core

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// DefaultEventTTL is how long events live when the provider names no TTL
// (kube-apiserver's --event-ttl default).
const DefaultEventTTL = time.Hour

// newEvents declares events, which expire ttl after their last write (the
// TTL is renewed by every update, as in kube).
func newEvents(ttl time.Duration) generic.Resource {
	seconds := uint64(ttl / time.Second)
	return generic.Resource{
		Name: "events", Singular: "event", Kind: "Event", Namespaced: true,
		ShortNames: []string{"ev"},
		New:        generic.NewOf[corev1.Event],
		NewList:    generic.NewOf[corev1.EventList],
		Strategy:   EventStrategy(SchemeGroupVersion),
		AttrFunc:   eventAttrs,
		TTLFunc:    func(runtime.Object, uint64, bool) (uint64, error) { return seconds, nil },
		Table:      eventTable,
	}
}

// eventAttrs are the fields kube's events select on (core v1's names).
var eventAttrs = generic.AttrFuncOf("an event", true, func(ev *corev1.Event, set fields.Set) {
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	for k, v := range map[string]string{
		"involvedObject.kind":            ev.InvolvedObject.Kind,
		"involvedObject.namespace":       ev.InvolvedObject.Namespace,
		"involvedObject.name":            ev.InvolvedObject.Name,
		"involvedObject.uid":             string(ev.InvolvedObject.UID),
		"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
		"reason":                         ev.Reason,
		"reportingComponent":             ev.ReportingController,
		"source":                         source,
		"type":                           ev.Type,
	} {
		set[k] = v
	}
})

// EventStrategy is the strategy of events written at gv: core v1, or
// events.k8s.io/v1 (the same objects, served by a view of this store),
// whose validation is stricter, as kube's. Events may be created by PUT;
// deleting one never involves the garbage collector.
func EventStrategy(gv schema.GroupVersion) generic.Strategy {
	return eventStrategy{generic.BaseStrategy{Namespaced: true}, gv}
}

type eventStrategy struct {
	generic.BaseStrategy
	gv schema.GroupVersion
}

func (eventStrategy) AllowCreateOnUpdate() bool { return true }

func (eventStrategy) DefaultGarbageCollectionPolicy(context.Context) rest.GarbageCollectionPolicy {
	return rest.Unsupported
}

func (s eventStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateEvent(obj.(*corev1.Event), nil, s.gv)
}

func (s eventStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateEvent(obj.(*corev1.Event), old.(*corev1.Event), s.gv)
}

var eventDocs = corev1.Event{}.SwaggerDoc()

var eventTable = generic.TableOf([]metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: eventDocs["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: eventDocs["type"]},
	{Name: "Reason", Type: "string", Description: eventDocs["reason"]},
	{Name: "Object", Type: "string", Description: eventDocs["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: eventDocs["source"]},
	{Name: "Message", Type: "string", Description: eventDocs["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: eventDocs["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: eventDocs["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: generic.NameColumn.Description},
}, func(ev *corev1.Event) ([]interface{}, error) {
	first := generic.TranslateTimestampSince(ev.FirstTimestamp)
	if ev.FirstTimestamp.IsZero() {
		first = microTimeSince(ev.EventTime)
	}
	last := generic.TranslateTimestampSince(ev.LastTimestamp)
	if ev.LastTimestamp.IsZero() {
		last = first
	}
	count := ev.Count
	if ev.Series != nil {
		last, count = microTimeSince(ev.Series.LastObservedTime), ev.Series.Count
	} else if count == 0 {
		count = 1 // singleton events of the new API have no count
	}
	target := strings.ToLower(ev.InvolvedObject.Kind)
	if ev.InvolvedObject.Name != "" {
		target += "/" + ev.InvolvedObject.Name
	}
	return []interface{}{last, ev.Type, ev.Reason, target, ev.InvolvedObject.FieldPath,
		eventSource(ev), strings.TrimSpace(ev.Message), first, int64(count), ev.Name}, nil
})

func eventSource(ev *corev1.Event) string {
	component, instance := ev.Source.Component, ev.Source.Host
	if component == "" {
		component = ev.ReportingController
	}
	if instance == "" {
		instance = ev.ReportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

func microTimeSince(t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}
