package queue

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRelist(t *testing.T) {
	obj := func(name string) *metav1.ObjectMeta { return &metav1.ObjectMeta{Name: name} }
	known := map[string]*metav1.ObjectMeta{"kept": obj("kept"), "gone": obj("gone")}
	pending := map[string]bool{"other": true}
	got := Relist(known, []*metav1.ObjectMeta{obj("kept"), obj("new")}, pending)
	if want := []string{"kept", "new"}; !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
		t.Errorf("known = %v, want %v", slices.Sorted(maps.Keys(got)), want)
	}
	if want := []string{"gone", "kept", "new", "other"}; !slices.Equal(slices.Sorted(maps.Keys(pending)), want) {
		t.Errorf("pending = %v, want %v", slices.Sorted(maps.Keys(pending)), want)
	}
}

func TestSignalCoalesces(t *testing.T) {
	s := NewSignal()
	s.Notify()
	s.Notify() // must not block
	<-s
	select {
	case <-s:
		t.Fatal("two notifies woke the worker twice")
	default:
	}
}
