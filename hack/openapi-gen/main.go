// Command openapi-gen writes the OpenAPI documents miniapiserver serves
// into api/openapi: /openapi/v2 (v2.json) and one /openapi/v3 document
// per path (v3/api/v1.json, v3/apis/apps/v1.json, ...), as kube-apiserver
// 1.37 describes the same groups; definitions.json, their definitions
// once; and structure/structure_generated.go, the structured-merge-diff
// types of those definitions as Go literals, which server-side apply
// reads without decoding anything.
//
// The definitions are built here, not taken from k8s.io/kubernetes: the
// structure of each type by reflection, its descriptions and markers
// (+listType, +patchStrategy, +optional, +enum, +default, ...) from the
// source of k8s.io/api and k8s.io/apimachinery in the module cache, with
// the rules of kube-openapi's openapi-gen. The paths come from the routes
// the server mounts (apiserver.Endpoints), with the names, parameters and
// responses kube-apiserver's installer gives them; kube-openapi's builders
// assemble the documents.
//
// Run from the repository root:
//
//	go run ./hack/openapi-gen
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "api/openapi", "directory to write the documents into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "openapi-gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	docs, err := generate()
	if err != nil {
		return err
	}
	if err := removeStale(out, docs); err != nil {
		return err
	}
	for name, data := range docs {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeStale deletes the documents of out that are no longer generated
// (a group no longer served).
func removeStale(out string, docs map[string][]byte) error {
	return filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		if _, ok := docs[filepath.ToSlash(rel)]; !ok {
			return os.Remove(p)
		}
		return nil
	})
}
