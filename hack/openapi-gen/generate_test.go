package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDocumentsUpToDate fails when api/openapi is not what the generator
// writes now: regenerate with `go run ./hack/openapi-gen`.
func TestDocumentsUpToDate(t *testing.T) {
	docs, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "api", "openapi")
	for name, want := range docs {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v; run go run ./hack/openapi-gen", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("api/openapi/%s is out of date; run go run ./hack/openapi-gen", name)
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if _, ok := docs[filepath.ToSlash(rel)]; !ok {
			t.Errorf("api/openapi/%s is no longer generated; run go run ./hack/openapi-gen", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDescription(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"joined lines", []string{"Pod is a collection", "of containers."}, "Pod is a collection of containers."},
		{"paragraphs", []string{"One.", "", "Two."}, "One.\n\nTwo."},
		{"markers and TODOs dropped", []string{"Name.", "+optional", "TODO: later", "+listType=atomic"}, "Name."},
		{"indented lines kept", []string{"Example:", "\tfoo: bar", "end"}, "Example:\n\tfoo: bar\nend"},
		{"nothing after ---", []string{"Kept.", "---", "Dropped."}, "Kept."},
		{"enum values", append([]string{"Policy."}, enumDescription([]enumValue{
			{name: "PullNever", value: "Never", comment: "PullNever means never"},
			{name: "PullAlways", value: "Always", comment: "PullAlways means  always"},
		})...), "Policy.\n\nPossible enum values:\n - `\"Always\"` means always\n - `\"Never\"` means never"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := description(tc.lines); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestExtensions(t *testing.T) {
	got, err := extensions([]string{
		"Ports.", "+patchMergeKey=containerPort", "+patchStrategy=merge",
		"+listType=map", "+listMapKey=containerPort", "+listMapKey=protocol", "+optional",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{
		"x-kubernetes-patch-merge-key": "containerPort",
		"x-kubernetes-patch-strategy":  "merge",
		"x-kubernetes-list-type":       "map",
		"x-kubernetes-list-map-keys":   []interface{}{"containerPort", "protocol"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if g := got[k]; !equalJSON(g, v) {
			t.Errorf("%s: got %v, want %v", k, g, v)
		}
	}
}

func equalJSON(a, b interface{}) bool {
	al, aok := a.([]interface{})
	bl, bok := b.([]interface{})
	if aok != bok {
		return false
	}
	if !aok {
		return a == b
	}
	if len(al) != len(bl) {
		return false
	}
	for i := range al {
		if al[i] != bl[i] {
			return false
		}
	}
	return true
}
