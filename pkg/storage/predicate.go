package storage

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// AttrFunc returns the labels and selectable fields of an object. The
// fields always include metadata.name and, for namespaced resources,
// metadata.namespace.
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// SelectionPredicate selects objects by label and field, and carries the
// paging options of a list.
type SelectionPredicate struct {
	Label    labels.Selector
	Field    fields.Selector
	GetAttrs AttrFunc
	// Limit caps the number of objects in a list page (0: no cap).
	Limit int64
	// Continue is the token of the page to read.
	Continue string
}

// Everything selects every object.
var Everything = SelectionPredicate{Label: labels.Everything(), Field: fields.Everything()}

// Empty reports whether p selects every object (limits aside).
func (p SelectionPredicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether obj is selected; it computes obj's attributes
// with GetAttrs unless p is empty.
func (p SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	l, f, err := p.GetAttrs(obj)
	if err != nil {
		return false, err
	}
	return p.MatchesAttrs(l, f), nil
}

// MatchesAttrs reports whether an object with these labels and fields is
// selected.
func (p SelectionPredicate) MatchesAttrs(l labels.Labels, f fields.Fields) bool {
	if p.Label != nil && !p.Label.Empty() && !p.Label.Matches(l) {
		return false
	}
	if p.Field != nil && !p.Field.Empty() && !p.Field.Matches(f) {
		return false
	}
	return true
}

// MatchesSingle returns the name when the field selector pins
// metadata.name to one value, so a list can read one key instead of a range.
func (p SelectionPredicate) MatchesSingle() (string, bool) {
	if p.Field == nil || len(p.Continue) > 0 {
		return "", false
	}
	return p.Field.RequiresExactMatch("metadata.name")
}

// FieldValue returns the value a field selector requires for field, when
// it pins it to one value (used by indexes).
func (p SelectionPredicate) FieldValue(field string) (string, bool) {
	if p.Field == nil {
		return "", false
	}
	return p.Field.RequiresExactMatch(field)
}
