package cacher

import (
	"fmt"
	"testing"
)

func TestAttrHints(t *testing.T) {
	var h attrHints
	labels := pairs{"app", "web"}
	h.put("/a", attrHint{data: []byte(`{"v":1}`), labels: labels})
	if _, ok := h.take("/a", []byte(`{"v":0}`)); ok {
		t.Fatal("a hint was taken for other bytes")
	}
	if hint, ok := h.take("/a", []byte(`{"v":1}`)); !ok || hint.labels.Get("app") != "web" {
		t.Fatalf("take: %v %v", hint, ok)
	}
	if _, ok := h.take("/a", []byte(`{"v":1}`)); ok {
		t.Fatal("a hint was taken twice")
	}

	// A later write of the key replaces its hint.
	h.put("/b", attrHint{data: []byte(`{"v":1}`)})
	h.put("/b", attrHint{data: []byte(`{"v":2}`)})
	if _, ok := h.take("/b", []byte(`{"v":1}`)); ok {
		t.Fatal("a replaced hint was taken")
	}
	if _, ok := h.take("/b", []byte(`{"v":2}`)); !ok {
		t.Fatal("the latest hint was not taken")
	}

	// A re-list drops them all.
	h.put("/c", attrHint{data: []byte(`{}`)})
	h.reset()
	if len(h.hints) != 0 {
		t.Fatalf("after a re-list: %v", h.hints)
	}

	// Bounded: when full, they are all dropped.
	for i := range maxAttrHints + 10 {
		h.put(fmt.Sprint("/k", i), attrHint{})
	}
	if len(h.hints) > maxAttrHints {
		t.Fatalf("%d hints kept, want at most %d", len(h.hints), maxAttrHints)
	}
}
