package conversion

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The goldens in testdata are what kube-apiserver v1.37.2 answered to GETs
// of one stored object at each of its versions (testdata/hpa:
// autoscaling/v1 and v2; testdata/events: v1 and events.k8s.io/v1), for
// objects created at either version (their names say which) and, for
// some, with a status written. Converting the stored version's answer must
// give the other's, byte for byte once encoded; events convert back as
// well. An autoscaler read at v1 does not always convert back to the same
// v2 object, in kube either (the CPU target moves last, v1's zero
// quantities stay): the rules of that direction are tested one by one in
// autoscaling_test.go, and here only for an object that never had more
// than v1 can say.

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, family := range []struct {
		dir        string
		stored     string // the suffix of the stored version's goldens
		served     string // the other's
		newStored  func() runtime.Object
		newServed  func() runtime.Object
		storedKind schema.GroupVersionKind
		servedKind schema.GroupVersionKind
		// backward reports whether the served version's answer of a
		// golden converts back to the stored one's.
		backward func(name string) bool
	}{{
		dir: "testdata/hpa", stored: ".v2.json", served: ".v1.json",
		newStored:  func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		newServed:  func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
		storedKind: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		servedKind: autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		backward:   func(name string) bool { return name == "v1min" },
	}, {
		dir: "testdata/events", stored: ".core.json", served: ".events.k8s.io.json",
		newStored:  func() runtime.Object { return &corev1.Event{} },
		newServed:  func() runtime.Object { return &eventsv1.Event{} },
		storedKind: corev1.SchemeGroupVersion.WithKind("Event"),
		servedKind: eventsv1.SchemeGroupVersion.WithKind("Event"),
		backward:   func(string) bool { return true },
	}} {
		for _, name := range goldenNames(t, family.dir, family.stored) {
			t.Run(family.dir+"/"+name, func(t *testing.T) {
				t.Parallel()
				stored := readGolden(t, family.dir+"/"+name+family.stored)
				served := readGolden(t, family.dir+"/"+name+family.served)
				checkConversion(t, stored, family.newStored(), family.servedKind, served)
				if family.backward(name) {
					checkConversion(t, served, family.newServed(), family.storedKind, stored)
				}
			})
		}
	}
}

// checkConversion decodes in into into, converts it to kind to, and
// compares its encoding with want.
func checkConversion(t *testing.T, in []byte, into runtime.Object, to schema.GroupVersionKind, want []byte) {
	t.Helper()
	if err := json.Unmarshal(in, into); err != nil {
		t.Fatal(err)
	}
	out, err := Builtin().Convert(into, to)
	if err != nil {
		t.Fatalf("converting to %v: %v", to, err)
	}
	got, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("converting to %v:\n got %s\nwant %s", to, got, want)
	}
}

func goldenNames(t *testing.T, dir, suffix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens in %s: %v", dir, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), suffix))
	}
	return names
}

func readGolden(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(data)
}
