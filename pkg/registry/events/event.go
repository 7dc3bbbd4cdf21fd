package events

import (
	"fmt"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// eventsV1 serves core v1 Events as events.k8s.io/v1 Events: kube's
// stricter validation for what is written at this version, its own
// field selectors, and core's table (kube prints both alike).
var eventsV1 = generic.Version{
	Kind: eventsv1.SchemeGroupVersion.WithKind("Event"),
	New:  generic.NewOf[eventsv1.Event], NewList: generic.NewOf[eventsv1.EventList],
	Converter:            conversion.Builtin(),
	Strategy:             core.EventStrategy(eventsv1.SchemeGroupVersion),
	FieldLabelConversion: eventFieldLabel,
}

// fieldLabels maps the field selectors of events.k8s.io/v1 to the fields
// of the stored core v1 events (kube's list: no source, no other
// involvedObject names).
var fieldLabels = map[string]string{
	"reason":                    "reason",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"type":                      "type",
	"metadata.namespace":        "metadata.namespace",
	"metadata.name":             "metadata.name",
}

func eventFieldLabel(label, value string) (string, string, error) {
	mapped, ok := fieldLabels[label]
	if !ok {
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
	return mapped, value, nil
}
