package main

import (
	"reflect"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
)

// route is one documented operation: what kube's go-restful route
// carries, behind kube-openapi's common.Route.
type route struct {
	method, path, operation, doc string
	params                       []common.Parameter
	consumes, produces           []string
	metadata                     map[string]interface{}
	reads, writes                interface{}
	responses                    []common.StatusCodeResponse
}

var _ common.Route = (*route)(nil)

func (r *route) Method() string                                   { return r.method }
func (r *route) Path() string                                     { return r.path }
func (r *route) OperationName() string                            { return r.operation }
func (r *route) Parameters() []common.Parameter                   { return r.params }
func (r *route) Description() string                              { return r.doc }
func (r *route) Consumes() []string                               { return r.consumes }
func (r *route) Produces() []string                               { return r.produces }
func (r *route) Metadata() map[string]interface{}                 { return r.metadata }
func (r *route) RequestPayloadSample() interface{}                { return r.reads }
func (r *route) ResponsePayloadSample() interface{}               { return r.writes }
func (r *route) StatusCodeResponses() []common.StatusCodeResponse { return r.responses }

// returns documents a response.
func (r *route) returns(code int, message string, model interface{}) {
	r.responses = append(r.responses, &response{code: code, message: message, model: model})
}

// read documents the request body, as go-restful's Reads: a required
// parameter named "body".
func (r *route) read(sample interface{}) {
	r.reads = sample
	r.params = append(r.params, &parameter{name: "body", kind: common.BodyParameterKind, required: true})
}

// body is the route's body parameter.
func (r *route) body() *parameter {
	for _, p := range r.params {
		if p.Kind() == common.BodyParameterKind {
			return p.(*parameter)
		}
	}
	return nil
}

// addObjectParams adds the top-level fields of an options struct as query
// parameters, as kube's installer (AddObjectParams) does: fields of basic
// types (and pointers to them), named by their JSON name and described by
// the type's SwaggerDoc, but for excluded names.
func (r *route) addObjectParams(obj interface{}, excluded ...string) {
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
		r.params = append(r.params, queryParam(jsonName, docs[jsonName], typeToJSON(f.Type.String())))
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

// parameter is a route parameter.
type parameter struct {
	name, description, dataType string
	kind                        common.ParameterKind
	required                    bool
}

var _ common.Parameter = (*parameter)(nil)

func (p *parameter) Name() string               { return p.name }
func (p *parameter) Description() string        { return p.description }
func (p *parameter) Required() bool             { return p.required }
func (p *parameter) Kind() common.ParameterKind { return p.kind }
func (p *parameter) DataType() string           { return p.dataType }
func (p *parameter) AllowMultiple() bool        { return false }

func pathParam(name, description string) *parameter {
	return &parameter{name: name, description: description, dataType: "string", kind: common.PathParameterKind, required: true}
}

func queryParam(name, description, dataType string) *parameter {
	return &parameter{name: name, description: description, dataType: dataType, kind: common.QueryParameterKind}
}
