package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apiopenapi "github.com/miniapiserver/miniapiserver/api/openapi"
)

// CustomResource is what the documents say of one served version of a
// custom resource: its routes, and its definitions (those of its kind
// and list kind, by name, made for /openapi/v2 and for /openapi/v3).
type CustomResource struct {
	Group, Version, Plural, Kind, ListKind string
	Namespaced, Status, Scale              bool
	// KindDefinition and ListDefinition name the definitions of the
	// kind and list kind in V2 and V3.
	KindDefinition, ListDefinition string
	V2, V3                         map[string]spec.Schema
}

// madeFrom is a group version's /openapi/v3 document (custom resources',
// or an extension server's) and what it was made from.
type madeFrom[T any] struct {
	from T
	doc  *document
}

// keep returns old when it was made from the same as from, so that the
// document keeps its hash and caches; else a new document of path p,
// built by build when first asked for.
func keep[T any](old *madeFrom[T], from T, same func(a, b T) bool, p string, build func() ([]byte, error), now time.Time) *madeFrom[T] {
	if old != nil && same(old.from, from) {
		return old
	}
	return &madeFrom[T]{from: from, doc: newDocument(p, build, now, v3Proto)}
}

// SetCustomResources serves crs besides the generated documents, as
// kube's OpenAPI controllers of custom resources do: merged into
// /openapi/v2, and as one /openapi/v3 document per group version
// (apis/<group>/<version>), with their own hashes. Documents are made
// when first asked for; a group version whose custom resources did not
// change keeps its document (and hash).
func (s *Service) SetCustomResources(crs []CustomResource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byPath := map[string][]CustomResource{}
	for _, cr := range crs {
		p := "apis/" + cr.Group + "/" + cr.Version
		byPath[p] = append(byPath[p], cr)
	}
	now := time.Now()
	custom := map[string]*madeFrom[[]CustomResource]{}
	for p, list := range byPath {
		sort.Slice(list, func(i, j int) bool { return list[i].Plural < list[j].Plural })
		custom[p] = keep(s.custom[p], list, func(a, b []CustomResource) bool { return reflect.DeepEqual(a, b) },
			p, func() ([]byte, error) { return buildV3(list) }, now)
	}
	s.custom, s.crs = custom, crs
	s.publishLocked()
}

// publishLocked serves the generated documents with those of the custom
// resources and of the extension API servers (s.mu held).
func (s *Service) publishLocked() {
	now := time.Now()
	next := &documents{v2: s.generated.v2, v3: maps.Clone(s.generated.v3)}
	for p, d := range s.custom {
		next.v3[p] = d.doc
	}
	for p, d := range s.remote {
		if _, local := next.v3[p]; !local {
			next.v3[p] = d.doc
		}
	}
	if crs, remote := s.crs, s.remoteList; len(crs) > 0 || len(remote) > 0 {
		generated := s.generated.v2
		next.v2 = newDocument("v2", func() ([]byte, error) {
			g, err := generated.compact()
			if err != nil {
				return nil, err
			}
			doc := g.data
			if len(crs) > 0 {
				if doc, err = mergeV2(doc, crs); err != nil {
					return nil, err
				}
			}
			return mergeRemoteV2(doc, remote)
		}, now, v2Proto)
	}
	next.index = sync.OnceValues(next.buildIndex)
	s.current.Store(next)
}

// crdInfo is what kube's documents of custom resources say of
// themselves.
var crdInfo = &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"}}

// buildV3 is the /openapi/v3 document of the custom resources of one
// group version.
func buildV3(crs []CustomResource) ([]byte, error) {
	defs, err := definitions(crs, false)
	if err != nil {
		return nil, err
	}
	c := &container{root: "/apis/" + crs[0].Group + "/" + crs[0].Version}
	for _, cr := range crs {
		c.routes = append(c.routes, customResourceRoutes(cr)...)
	}
	doc, err := builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{c}, &common.OpenAPIV3Config{
		Info:                           crdInfo,
		CommonResponses:                map[int]*spec3.Response{401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}},
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              func(name string) (string, spec.Extensions) { return name, nil },
		GetDefinitions:                 func(common.ReferenceCallback) map[string]common.OpenAPIDefinition { return defs },
	})
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", c.root, err)
	}
	return json.Marshal(doc)
}

// mergeV2 is base (the generated /openapi/v2 document) with the paths
// and definitions of the custom resources added.
func mergeV2(base []byte, crs []CustomResource) ([]byte, error) {
	defs, err := definitions(crs, true)
	if err != nil {
		return nil, err
	}
	byGV := map[string]*container{}
	var containers []common.RouteContainer
	for _, cr := range crs {
		root := "/apis/" + cr.Group + "/" + cr.Version
		c := byGV[root]
		if c == nil {
			c = &container{root: root}
			byGV[root] = c
			containers = append(containers, c)
		}
		c.routes = append(c.routes, customResourceRoutes(cr)...)
	}
	doc, err := builder.BuildOpenAPISpecFromRoutes(containers, &common.Config{
		ProtocolList:                   []string{"https"},
		Info:                           crdInfo,
		CommonResponses:                map[int]spec.Response{401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}},
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              func(name string) (string, spec.Extensions) { return name, nil },
		GetDefinitions:                 func(common.ReferenceCallback) map[string]common.OpenAPIDefinition { return defs },
	})
	if err != nil {
		return nil, fmt.Errorf("openapi: custom resources: %w", err)
	}
	// The generated document has the definitions they share.
	own := spec.Definitions{}
	for _, cr := range crs {
		for name := range cr.V2 {
			own[name] = doc.Definitions[name]
		}
	}
	PruneDefaults(own)
	paths := map[string]interface{}{}
	for p, item := range doc.Paths.Paths {
		paths[p] = item
	}
	defsAdded := map[string]interface{}{}
	for name, s := range own {
		defsAdded[name] = s
	}
	return addToObjects(base, map[string]map[string]interface{}{"paths": paths, "definitions": defsAdded})
}

// addToObjects adds entries to the top-level objects of a JSON document,
// keeping the order of its keys (those of the objects changed end up
// sorted).
func addToObjects(doc []byte, additions map[string]map[string]interface{}) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("openapi: the generated document is no object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if add, ok := additions[key]; ok {
			entries := map[string]json.RawMessage{}
			if err := json.Unmarshal(value, &entries); err != nil {
				return nil, fmt.Errorf("openapi: %s: %w", key, err)
			}
			for k, v := range add {
				data, err := json.Marshal(v)
				if err != nil {
					return nil, err
				}
				entries[k] = data
			}
			if value, err = json.Marshal(entries); err != nil {
				return nil, err
			}
		}
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// definitions are the definitions the documents of crs may refer to, by
// name, with what each refers to: the custom resources' own (for v2 or
// v3) and the shared ones (ObjectMeta, Status, Scale, ...).
func definitions(crs []CustomResource, v2 bool) (map[string]common.OpenAPIDefinition, error) {
	shared, err := sharedDefinitions()
	if err != nil {
		return nil, err
	}
	out := make(map[string]common.OpenAPIDefinition, len(shared))
	for name, d := range shared {
		if d.Schema, err = fresh(d.Schema); err != nil {
			return nil, err
		}
		out[name] = d
	}
	for _, cr := range crs {
		models := cr.V3
		if v2 {
			models = cr.V2
		}
		for name, s := range models {
			if s, err = fresh(s); err != nil {
				return nil, err
			}
			out[name] = common.OpenAPIDefinition{Schema: s, Dependencies: references(&s)}
		}
	}
	return out, nil
}

// fresh is a deep copy of s. kube-openapi's builders edit the definitions
// they are given (they delete extensions), while the same schemas serve
// every document built concurrently and the comparison of the next set of
// custom resources with this one.
func fresh(s spec.Schema) (spec.Schema, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return spec.Schema{}, err
	}
	var out spec.Schema
	if err := json.Unmarshal(data, &out); err != nil {
		return spec.Schema{}, err
	}
	return out, nil
}

// sharedDefinitions are the definitions of apiopenapi.MetaSchemas, with
// their dependencies.
var sharedDefinitions = sync.OnceValues(func() (map[string]common.OpenAPIDefinition, error) {
	schemas, err := apiopenapi.MetaSchemas()
	if err != nil {
		return nil, err
	}
	out := make(map[string]common.OpenAPIDefinition, len(schemas))
	for name, s := range schemas {
		out[name] = common.OpenAPIDefinition{Schema: *s, Dependencies: references(s)}
	}
	return out, nil
})

var refPattern = regexp.MustCompile(`"\$ref":"#/(?:definitions|components/schemas)/([^"]+)"`)

// references are the names of the definitions s refers to.
func references(s *spec.Schema) []string {
	data, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range refPattern.FindAllSubmatch(data, -1) {
		name := strings.ReplaceAll(strings.ReplaceAll(string(m[1]), "~1", "/"), "~0", "~")
		if !contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// container is the routes under one root path.
type container struct {
	root   string
	routes []common.Route
}

func (c *container) RootPath() string                   { return c.root }
func (c *container) PathParameters() []common.Parameter { return nil }
func (c *container) Routes() []common.Route             { return c.routes }

// PruneDefaults removes every default from definitions: /openapi/v2
// carries none.
func PruneDefaults(defs spec.Definitions) {
	w := schemamutation.Walker{
		SchemaCallback: func(s *spec.Schema) *spec.Schema {
			if s.Default == nil {
				return s
			}
			c := *s
			c.Default = nil
			return &c
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	for k, v := range defs {
		defs[k] = *w.WalkSchema(&v)
	}
}
