package handlers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// TestLimitJSONPatchCopies: once set, a patch copying a map into itself
// stops at kube's 3 MiB with the library's error, instead of doubling the
// document at each copy; a lower bound set by someone else is kept.
func TestLimitJSONPatchCopies(t *testing.T) {
	LimitJSONPatchCopies()
	if jsonpatch.AccumulatedCopySizeLimit != MaxJSONPatchCopyBytes {
		t.Fatalf("limit %d, want %d", jsonpatch.AccumulatedCopySizeLimit, MaxJSONPatchCopyBytes)
	}
	ops := []string{`{"op":"add","path":"/a","value":{"k":"` + strings.Repeat("x", 1000) + `"}}`}
	for i := range 18 {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"/a","path":"/a/c%d"}`, i))
	}
	patch, err := jsonpatch.DecodePatch([]byte("[" + strings.Join(ops, ",") + "]"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = patch.Apply([]byte(`{}`))
	var sizeErr *jsonpatch.AccumulatedCopySizeError
	if !errors.As(err, &sizeErr) {
		t.Fatalf("got %v, want the accumulated copy size error", err)
	}
	lower := MaxJSONPatchCopyBytes / 2
	jsonpatch.AccumulatedCopySizeLimit = lower
	defer func() { jsonpatch.AccumulatedCopySizeLimit = MaxJSONPatchCopyBytes }()
	LimitJSONPatchCopies()
	if jsonpatch.AccumulatedCopySizeLimit != lower {
		t.Errorf("a lower limit was raised to %d", jsonpatch.AccumulatedCopySizeLimit)
	}
}
