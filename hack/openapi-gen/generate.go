package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/miniapiserver/miniapiserver/api"
	apiopenapi "github.com/miniapiserver/miniapiserver/api/openapi"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi/route"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// generate builds every document: "v2.json" (/openapi/v2),
// "v3/<path>.json" (/openapi/v3/<path>) and "definitions.json" (their
// definitions once, for custom resources' and tools' schemas), indented
// JSON; and structureFile, the Go source of the structure of those
// definitions that server-side apply reads (api/openapi/structure).
func generate() (map[string][]byte, error) {
	groups, err := buildGroups()
	if err != nil {
		return nil, err
	}
	all, err := apiserver.Endpoints(groups)
	if err != nil {
		return nil, err
	}
	var containers []*routeContainer
	var groupNames []string
	gvs := map[string]schema.GroupVersion{}
	for _, g := range all {
		c, err := resourceRoutes(g)
		if err != nil {
			return nil, err
		}
		containers = append(containers, c)
		gvs[c.root] = g.GroupVersion
		if g.GroupVersion.Group != "" && !slices.Contains(groupNames, g.GroupVersion.Group) {
			groupNames = append(groupNames, g.GroupVersion.Group)
		}
	}
	containers = append(containers, discoveryRoutes(groupNames)...)

	types, pkgs := collectTypes(rootTypes(containers))
	src, err := loadSources(pkgs)
	if err != nil {
		return nil, err
	}
	namer, err := newDefinitionNamer(api.Scheme())
	if err != nil {
		return nil, err
	}
	var defsErr error
	getDefinitions := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		defs, err := definitions(src, types, ref)
		if err != nil {
			defsErr = err
		}
		return defs
	}

	out := map[string][]byte{}
	v2, err := buildV2(containers, namer, getDefinitions)
	if defsErr != nil {
		return nil, defsErr
	}
	if err != nil {
		return nil, err
	}
	if out["v2.json"], err = indentJSON(v2); err != nil {
		return nil, err
	}
	for _, c := range containers {
		doc, err := buildV3(c, namer, getDefinitions)
		if err != nil {
			return nil, err
		}
		if gv, ok := gvs[c.root]; ok {
			filterScopedGVKs(doc, gv.Group, gv.Version)
		}
		if out["v3"+c.root+".json"], err = indentJSON(doc); err != nil {
			return nil, err
		}
	}
	if out["definitions.json"], err = definitionsOf(out); err != nil {
		return nil, err
	}
	if out[structureFile], err = structureSource(out["definitions.json"]); err != nil {
		return nil, err
	}
	return out, nil
}

// definitionsOf is definitions.json: the definitions of the v3 documents
// of out, merged in the order of their paths.
func definitionsOf(out map[string][]byte) ([]byte, error) {
	var paths []string
	for p := range out {
		if strings.HasPrefix(p, "v3/") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	docs := make([][]byte, len(paths))
	for i, p := range paths {
		docs[i] = out[p]
	}
	defs, err := apiopenapi.Definitions(docs)
	if err != nil {
		return nil, err
	}
	return indentJSON(defs)
}

// buildGroups builds every group with the server's own wiring
// (app.BuildAPIGroups), on a storage that is never used.
func buildGroups() ([]rest.APIGroupInfo, error) {
	return app.BuildAPIGroups(app.NewOptions(), unusedStorage, app.ProviderDeps{Tokens: &core.TokenIssuer{}})
}

// unusedStorage gives every resource a nil storage.Interface: the groups
// are only inspected, never served.
var unusedStorage = generic.UndecoratedRESTOptions{
	Factory: func(storage.Config) (storage.Interface, storage.DestroyFunc, error) { return nil, func() {}, nil },
	Prefix:  "/registry",
}

// rootTypes are the Go types the routes read and write.
func rootTypes(containers []*routeContainer) []reflect.Type {
	var out []reflect.Type
	seen := map[reflect.Type]bool{}
	add := func(v interface{}) {
		if v == nil {
			return
		}
		t := reflect.TypeOf(v)
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, c := range containers {
		for _, r := range c.routes {
			add(r.RequestPayloadSample())
			add(r.ResponsePayloadSample())
			for _, resp := range r.StatusCodeResponses() {
				add(resp.Model())
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Info is what kube-apiserver 1.37 says of itself in every document.
var info = &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: "1.37"}}

const bearerToken = "BearerToken"

func buildV2(containers []*routeContainer, namer *definitionNamer, defs common.GetOpenAPIDefinitions) (*spec.Swagger, error) {
	rcs := make([]common.RouteContainer, len(containers))
	for i, c := range containers {
		rcs[i] = c
	}
	cfg := &common.Config{
		ProtocolList:                   []string{"https"},
		Info:                           info,
		DefaultResponse:                &spec.Response{ResponseProps: spec.ResponseProps{Description: "Default Response."}},
		CommonResponses:                map[int]spec.Response{401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}},
		GetOperationIDAndTagsFromRoute: route.OperationIDAndTags,
		GetDefinitionName:              namer.name,
		GetDefinitions:                 defs,
		SecurityDefinitions: &spec.SecurityDefinitions{bearerToken: &spec.SecurityScheme{SecuritySchemeProps: spec.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
		}}},
		DefaultSecurity: []map[string][]string{{bearerToken: {}}},
	}
	doc, err := builder.BuildOpenAPISpecFromRoutes(rcs, cfg)
	if err != nil {
		return nil, err
	}
	openapi.PruneDefaults(doc.Definitions)
	return doc, nil
}

func buildV3(c *routeContainer, namer *definitionNamer, defs common.GetOpenAPIDefinitions) (*spec3.OpenAPI, error) {
	cfg := &common.OpenAPIV3Config{
		Info:                           info,
		DefaultResponse:                &spec3.Response{ResponseProps: spec3.ResponseProps{Description: "Default Response."}},
		CommonResponses:                map[int]*spec3.Response{401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}},
		GetOperationIDAndTagsFromRoute: route.OperationIDAndTags,
		GetDefinitionName:              namer.name,
		GetDefinitions:                 defs,
		SecuritySchemes: spec3.SecuritySchemes{bearerToken: &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
		}}},
		DefaultSecurity: []map[string][]string{{bearerToken: {}}},
	}
	return builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{c}, cfg)
}

// indentJSON is v as JSON, indented by two spaces, with a final newline.
func indentJSON(v interface{}) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
