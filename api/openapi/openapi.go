// Package openapi holds the OpenAPI documents miniapiserver serves, as
// kube-apiserver 1.37 would describe the same groups: v2.json is
// /openapi/v2, and v3/<path>.json is /openapi/v3/<path> ("api/v1",
// "apis/apps/v1", ...).
//
// The documents are generated; after changing what is served (a resource,
// a verb, a group) or the k8s.io/api version, regenerate them from the
// repository root with
//
//	go run ./hack/openapi-gen
//
// (a test of hack/openapi-gen fails while they are out of date).
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

//go:embed *.json v3
var documents embed.FS

// definitionsFile holds every definition of the /openapi/v3 documents
// once (Definitions of them), for Schemas: 1.3 MB to read instead of the
// 8.6 MB of the documents, where most definitions repeat. The server
// itself no longer reads it: hack/openapi-gen compiles the structure
// server-side apply needs into package structure.
const definitionsFile = "definitions.json"

// FS returns the documents: "v2.json" and "v3/<path>.json" for each
// /openapi/v3/<path>. The files are indented JSON.
func FS() fs.FS { return documents }

// Schemas returns the schema of every definition of the /openapi/v3
// documents, by name ("io.k8s.api.apps.v1.Deployment"), as
// k8s.io/apimachinery's managedfields.NewTypeConverter takes them for
// server-side apply:
//
//	schemas, err := openapi.Schemas()
//	...
//	tc, err := managedfields.NewTypeConverter(schemas, false)
//
// A definition found in several documents is the same in each but for
// its x-kubernetes-group-version-kind, which lists here every kind of all
// of them. Each call reads the definitions again (about 5 MiB allocated
// for a 2 MiB map). The built-in kinds' converter comes from
// api/openapi/structure instead, which its tests check against this.
func Schemas() (map[string]*spec.Schema, error) {
	data, err := documents.ReadFile(definitionsFile)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w; run go run ./hack/openapi-gen", err)
	}
	out := map[string]*spec.Schema{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", definitionsFile, err)
	}
	return out, nil
}

// Definitions merges the definitions of /openapi/v3 documents, in the
// order given: what hack/openapi-gen writes to definitions.json. A
// definition keeps its first document's schema, with the group version
// kinds of every document.
func Definitions(docs [][]byte) (map[string]*spec.Schema, error) {
	out := map[string]*spec.Schema{}
	for i, data := range docs {
		var doc struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("openapi: document %d: %w", i, err)
		}
		for name, s := range doc.Components.Schemas {
			if prev, ok := out[name]; ok {
				mergeGVKs(prev, s)
				continue
			}
			out[name] = s
		}
	}
	return out, nil
}

// MetaSchemas returns the definitions custom resources refer to, as the
// /openapi/v3 documents have them: k8s.io/apimachinery's types
// (io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta, ListMeta, Status,
// ...) and autoscaling/v1's Scale. They are read once; callers must not
// modify them.
var MetaSchemas = sync.OnceValues(func() (map[string]*spec.Schema, error) {
	out := map[string]*spec.Schema{}
	for doc, prefix := range map[string]string{
		"v3/api/v1.json":       "io.k8s.apimachinery.",
		"v3/apis/apps/v1.json": "io.k8s.api.autoscaling.v1.Scale",
	} {
		data, err := documents.ReadFile(doc)
		if err != nil {
			return nil, err
		}
		var d struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", doc, err)
		}
		for name, s := range d.Components.Schemas {
			if strings.HasPrefix(name, prefix) {
				out[name] = s
			}
		}
	}
	return out, nil
})

const gvkExtension = "x-kubernetes-group-version-kind"

// mergeGVKs adds to dst the group-version-kinds of src it lacks.
func mergeGVKs(dst, src *spec.Schema) {
	more, _ := src.Extensions[gvkExtension].([]interface{})
	have, _ := dst.Extensions[gvkExtension].([]interface{})
	seen := map[string]bool{}
	for _, g := range have {
		seen[fmt.Sprint(g)] = true
	}
	for _, g := range more {
		if !seen[fmt.Sprint(g)] {
			seen[fmt.Sprint(g)] = true
			have = append(have, g)
		}
	}
	if len(have) > 0 {
		dst.AddExtension(gvkExtension, have)
	}
}
