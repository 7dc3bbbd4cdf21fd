package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
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
		New:        func() runtime.Object { return &corev1.Event{} },
		NewList:    func() runtime.Object { return &corev1.EventList{} },
		Strategy:   eventStrategy{generic.BaseStrategy{Namespaced: true}},
		AttrFunc:   eventAttrs,
		TTLFunc:    func(runtime.Object, uint64, bool) (uint64, error) { return seconds, nil },
		Table:      eventTable,
	}
}

// eventAttrs are the fields kube's events select on.
func eventAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return nil, nil, fmt.Errorf("not an event: %T", obj)
	}
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	set := generic.ObjectMetaFieldsSet(&ev.ObjectMeta, true)
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
	return ev.Labels, set, nil
}

// eventStrategy: events may be created by PUT; deleting one never
// involves the garbage collector.
type eventStrategy struct{ generic.BaseStrategy }

func (eventStrategy) AllowCreateOnUpdate() bool { return true }

func (eventStrategy) DefaultGarbageCollectionPolicy(context.Context) rest.GarbageCollectionPolicy {
	return rest.Unsupported
}

// Validate is kube's validation of core/v1 events, which (for backwards
// compatibility) checks neither the name nor much else.
func (eventStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateLegacyEvent(obj.(*corev1.Event))
}

func (eventStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validateLegacyEvent(obj.(*corev1.Event))
}

// Limits of kube's event validation.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

func validateLegacyEvent(ev *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if ev.EventTime.IsZero() {
		// Old-style events: the namespaces must agree ("default" stands
		// for none, for old clients).
		if ev.InvolvedObject.Namespace == "" {
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		return allErrs
	}
	if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
		allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	// core/v1 names reportingController reportingComponent.
	if ev.ReportingController == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("reportingComponent"), ""))
	}
	allErrs = append(allErrs, corevalidation.ValidateQualifiedName(ev.ReportingController, field.NewPath("reportingComponent"))...)
	if ev.ReportingInstance == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("reportingInstance"), ""))
	}
	if len(ev.ReportingInstance) > reportingInstanceLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", reportingInstanceLengthLimit)))
	}
	if ev.Action == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("action"), ""))
	}
	if len(ev.Action) > actionLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", actionLengthLimit)))
	}
	if ev.Reason == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("reason"), ""))
	}
	if len(ev.Reason) > reasonLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", reasonLengthLimit)))
	}
	if len(ev.Message) > noteLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
	}
	return allErrs
}

var eventDocs = corev1.Event{}.SwaggerDoc()

var eventTable = generic.TablePrinter{
	Columns: []metav1.TableColumnDefinition{
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
	},
	Cells: func(obj runtime.Object) ([]interface{}, error) {
		ev := obj.(*corev1.Event)
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
	},
}

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
