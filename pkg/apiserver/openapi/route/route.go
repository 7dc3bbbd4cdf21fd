// Package route describes the operations of API routes as kube-openapi's
// builders take them (common.Route), with the names, parameters and
// responses kube-apiserver's installer gives them: the OpenAPI generator
// (hack/openapi-gen) documents the built-in resources with it, and the
// server the custom resources it serves.
//
// It is a leaf of pkg/apiserver/openapi.
package route

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
)

// Route is one documented operation: what kube's go-restful route
// carries, behind kube-openapi's common.Route.
type Route struct {
	HTTPMethod, URL, Operation, Doc string
	Params                          []common.Parameter
	ConsumedTypes, ProducedTypes    []string
	Meta                            map[string]interface{}
	// Reads and Writes are samples of the request and response bodies.
	Reads, Writes interface{}
	Responses     []common.StatusCodeResponse
}

var _ common.Route = (*Route)(nil)

func (r *Route) Method() string                                   { return r.HTTPMethod }
func (r *Route) Path() string                                     { return r.URL }
func (r *Route) OperationName() string                            { return r.Operation }
func (r *Route) Parameters() []common.Parameter                   { return r.Params }
func (r *Route) Description() string                              { return r.Doc }
func (r *Route) Consumes() []string                               { return r.ConsumedTypes }
func (r *Route) Produces() []string                               { return r.ProducedTypes }
func (r *Route) Metadata() map[string]interface{}                 { return r.Meta }
func (r *Route) RequestPayloadSample() interface{}                { return r.Reads }
func (r *Route) ResponsePayloadSample() interface{}               { return r.Writes }
func (r *Route) StatusCodeResponses() []common.StatusCodeResponse { return r.Responses }

// Returns documents a response.
func (r *Route) Returns(code int, message string, model interface{}) {
	r.Responses = append(r.Responses, &response{code: code, message: message, model: model})
}

// Read documents the request body, as go-restful's Reads: a required
// parameter named "body".
func (r *Route) Read(sample interface{}) {
	r.Reads = sample
	r.Params = append(r.Params, &Parameter{name: "body", kind: common.BodyParameterKind, required: true})
}

// Body is the route's body parameter (nil without one).
func (r *Route) Body() *Parameter {
	for _, p := range r.Params {
		if p.Kind() == common.BodyParameterKind {
			return p.(*Parameter)
		}
	}
	return nil
}

// AddObjectParams adds the top-level fields of an options struct as query
// parameters, as kube's installer (AddObjectParams) does: fields of basic
// types (and pointers to them), named by their JSON name and described by
// the type's SwaggerDoc, but for excluded names.
func (r *Route) AddObjectParams(obj interface{}, excluded ...string) {
	t := reflect.TypeOf(obj)
	var docs map[string]string
	if d, ok := obj.(interface{ SwaggerDoc() map[string]string }); ok {
		docs = d.SwaggerDoc()
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch f.Type.Kind() {
		case reflect.Interface, reflect.Struct:
			continue
		case reflect.Pointer:
			if k := f.Type.Elem().Kind(); (k == reflect.Interface || k == reflect.Struct) && strings.TrimPrefix(f.Type.String(), "*") != "metav1.Time" {
				continue
			}
		}
		jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jsonName == "" || contains(excluded, jsonName) {
			continue
		}
		r.Params = append(r.Params, QueryParam(jsonName, docs[jsonName], typeToJSON(f.Type.String())))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// typeToJSON is the JSON type of an options field, by its Go type name.
func typeToJSON(typeName string) string {
	switch strings.TrimPrefix(typeName, "*") {
	case "bool":
		return "boolean"
	case "uint8", "int", "int32", "int64", "uint32", "uint64", "[]int32", "[]*int32":
		return "integer"
	case "float64", "float32":
		return "number"
	case "metav1.Time", "byte", "v1.DeletionPropagation", "v1.ResourceVersionMatch", "v1.IncludeObjectPolicy", "string", "[]string", "[]*string":
		return "string"
	}
	return typeName
}

// response is a documented status code.
type response struct {
	code    int
	message string
	model   interface{}
}

func (r *response) Code() int          { return r.code }
func (r *response) Message() string    { return r.message }
func (r *response) Model() interface{} { return r.model }

// Parameter is a route parameter.
type Parameter struct {
	name, description, dataType string
	kind                        common.ParameterKind
	required                    bool
}

var _ common.Parameter = (*Parameter)(nil)

func (p *Parameter) Name() string               { return p.name }
func (p *Parameter) Description() string        { return p.description }
func (p *Parameter) Required() bool             { return p.required }
func (p *Parameter) Kind() common.ParameterKind { return p.kind }
func (p *Parameter) DataType() string           { return p.dataType }
func (p *Parameter) AllowMultiple() bool        { return false }

// SetRequired makes the parameter required, or not.
func (p *Parameter) SetRequired(required bool) { p.required = required }

// PathParam is a required string parameter of the path.
func PathParam(name, description string) *Parameter {
	return &Parameter{name: name, description: description, dataType: "string", kind: common.PathParameterKind, required: true}
}

// QueryParam is an optional parameter of the query.
func QueryParam(name, description, dataType string) *Parameter {
	return &Parameter{name: name, description: description, dataType: dataType, kind: common.QueryParameterKind}
}

// operationVerbs are the verbs an operation name may start with; the
// shortest that matches counts ("deletecollectionX" is "delete").
var operationVerbs = util.NewTrie([]string{"get", "log", "read", "replace", "patch", "delete", "deletecollection", "watch", "connect", "proxy", "list", "create"})

// OperationIDAndTags names an operation as kube-apiserver does: the verb,
// the group (without ".k8s.io") and version from the path, then the rest
// ("listCoreV1NamespacedPod"); the tag is "core_v1". It is common.Config's
// GetOperationIDAndTagsFromRoute.
func OperationIDAndTags(r common.Route) (string, []string, error) {
	op := r.OperationName()
	verb, ok := operationVerbs.GetPrefix(op)
	if !ok {
		return op, nil, fmt.Errorf("operation names should start with a verb. Cannot determine operation verb from %v", op)
	}
	op = op[len(verb):]
	parts := strings.Split(strings.Trim(r.Path(), "/"), "/")
	if len(parts) >= 1 && parts[0] == "api" {
		parts = append([]string{"apis", "core"}, parts[1:]...)
	}
	prefix := verb
	var tags []string
	if len(parts) >= 2 && parts[0] == "apis" {
		trimmed := strings.TrimSuffix(parts[1], ".k8s.io")
		prefix += validOperationID(trimmed, true)
		tag := validOperationID(trimmed, false)
		if len(parts) > 2 {
			prefix += validOperationID(parts[2], true)
			tag += "_" + validOperationID(parts[2], false)
		}
		tags = append(tags, tag)
	} else if len(parts) >= 1 {
		tags = append(tags, validOperationID(parts[0], false))
	}
	return prefix + validOperationID(op, true), tags, nil
}

// validOperationID keeps the letters, digits (not first) and underscores
// of s, capitalizing the letter after each dropped character.
func validOperationID(s string, capitalizeFirst bool) string {
	var b strings.Builder
	capitalize := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if capitalize {
				r = unicode.ToUpper(r)
				capitalize = false
			}
			b.WriteRune(r)
		} else {
			capitalize = true
		}
	}
	return b.String()
}

// ArticleFor is the article kube's operation descriptions put before a
// noun: " a ", " an ", or " " before a plural.
func ArticleFor(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if strings.ContainsRune("aeiou", unicode.ToLower(rune(noun[0]))) {
		return " an "
	}
	return " a "
}
