package core

import (
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// Limits of kube's event validation.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// validateEvent is kube's validation of an event written at gv (old is
// nil on create). Every event passes the legacy checks; core v1 checks
// nothing more, for backwards compatibility, while events.k8s.io/v1 (and
// any later version) checks the metadata, the series, the type, that the
// deprecated fields are unset, and what an update may not change. Field
// paths are core v1's at every version, as kube's (its internal type's).
func validateEvent(ev, old *corev1.Event, gv schema.GroupVersion) field.ErrorList {
	allErrs := validateLegacyEvent(ev, gv)
	if gv == SchemeGroupVersion {
		return allErrs
	}
	if old == nil {
		allErrs = append(allErrs, corevalidation.ValidateObjectMeta(&ev.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
		allErrs = append(allErrs, validateEventSeries(ev)...)
		return append(allErrs, validateNewEvent(ev)...)
	}
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&ev.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if !reflect.DeepEqual(ev.Series, old.Series) {
		allErrs = append(allErrs, validateEventSeries(ev)...)
	}
	return append(allErrs, validateEventUpdate(ev, old)...)
}

// validateNewEvent: an event of the new API says when it happened and
// leaves the deprecated fields alone.
func validateNewEvent(ev *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	if ev.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	if !ev.FirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !ev.LastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if ev.Count != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if ev.Source.Component != "" || ev.Source.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return allErrs
}

// validateEventUpdate: what happened does not change; only the series,
// the metadata and a sub-microsecond eventTime may.
func validateEventUpdate(ev, old *corev1.Event) field.ErrorList {
	immutable := func(n, o any, name string) field.ErrorList {
		return apivalidation.ValidateImmutableField(n, o, field.NewPath(name))
	}
	allErrs := immutable(ev.InvolvedObject, old.InvolvedObject, "involvedObject")
	allErrs = append(allErrs, immutable(ev.Reason, old.Reason, "reason")...)
	allErrs = append(allErrs, immutable(ev.Message, old.Message, "message")...)
	allErrs = append(allErrs, immutable(ev.Source, old.Source, "source")...)
	allErrs = append(allErrs, immutable(ev.FirstTimestamp, old.FirstTimestamp, "firstTimestamp")...)
	allErrs = append(allErrs, immutable(ev.LastTimestamp, old.LastTimestamp, "lastTimestamp")...)
	allErrs = append(allErrs, immutable(ev.Count, old.Count, "count")...)
	allErrs = append(allErrs, immutable(ev.Reason, old.Reason, "reason")...)
	allErrs = append(allErrs, immutable(ev.Type, old.Type, "type")...)
	// Clients that truncate to microseconds, or encode nanoseconds in
	// protobuf, may move eventTime below a microsecond.
	if !ev.EventTime.Truncate(time.Microsecond).UTC().Equal(old.EventTime.Truncate(time.Microsecond).UTC()) {
		allErrs = append(allErrs, immutable(ev.EventTime, old.EventTime, "eventTime")...)
	}
	allErrs = append(allErrs, immutable(ev.Action, old.Action, "action")...)
	allErrs = append(allErrs, immutable(ev.Related, old.Related, "related")...)
	allErrs = append(allErrs, immutable(ev.ReportingController, old.ReportingController, "reportingController")...)
	return append(allErrs, immutable(ev.ReportingInstance, old.ReportingInstance, "reportingInstance")...)
}

func validateEventSeries(ev *corev1.Event) field.ErrorList {
	if ev.Series == nil {
		return nil
	}
	var allErrs field.ErrorList
	if ev.Series.Count < 2 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if ev.Series.LastObservedTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return allErrs
}

// validateLegacyEvent is what every event passes: the namespaces agree
// and, for an event of the new API (eventTime set), it names who reported
// it and why. core v1 calls reportingController reportingComponent.
func validateLegacyEvent(ev *corev1.Event, gv schema.GroupVersion) field.ErrorList {
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
	controllerPath := field.NewPath("reportingController")
	if gv == SchemeGroupVersion {
		controllerPath = field.NewPath("reportingComponent")
	}
	if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
		allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if ev.ReportingController == "" {
		allErrs = append(allErrs, field.Required(controllerPath, ""))
	}
	allErrs = append(allErrs, corevalidation.ValidateQualifiedName(ev.ReportingController, controllerPath)...)
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
