package api

import (
	"encoding"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// OpenAPI returns the OpenAPI 3 document of the server's routes, built
// from the route table: every route, its scope, query and path
// parameters, request and response bodies (their JSON Schemas derived
// from the Go types), and the error body.
func (s *Server) OpenAPI() map[string]any {
	g := &schemaGen{defs: map[string]any{}}
	errRef := g.schema(reflect.TypeFor[ErrorBody]())
	paths := map[string]any{}
	for _, rt := range s.routes() {
		op := map[string]any{"summary": rt.Summary, "operationId": operationID(rt),
			"x-scope": string(rt.Scope)}
		var params []any
		for _, name := range pathParams(rt.Path) {
			params = append(params, map[string]any{"name": name, "in": "path", "required": true,
				"schema": map[string]any{"type": "string"}})
		}
		for _, p := range rt.Params {
			sch := map[string]any{"type": p.Type}
			if p.Repeated {
				sch = map[string]any{"type": "array", "items": sch}
			}
			q := map[string]any{"name": p.Name, "in": "query", "schema": sch}
			if p.Description != "" {
				q["description"] = p.Description
			}
			if p.Repeated {
				q["style"], q["explode"] = "form", true
			}
			params = append(params, q)
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.Body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Body))}},
				"description": fmt.Sprintf("at most %d bytes", rt.maxBody)}
		}
		ok := map[string]any{"description": "success"}
		if rt.Response != nil {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Response))}}
		} else {
			ok["content"] = map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
		}
		errResp := map[string]any{"description": "error", "content": map[string]any{
			"application/json": map[string]any{"schema": errRef}}}
		op["responses"] = map[string]any{"200": ok, "default": errResp}
		if rt.Scope != ScopePublic {
			op["security"] = []any{map[string]any{"bearer": []any{}}}
		}
		item, _ := paths[rt.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.Path] = item
		}
		item[strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "revisit API", "version": "1",
			"description": "Scheduler of recurring visits of software origins. Errors are " +
				`{"error": {"code", "message", "field"}}. With tokens configured, routes other than ` +
				"x-scope public need a bearer token: read for x-scope read, write for x-scope write."},
		"paths": paths,
		"components": map[string]any{"schemas": g.defs,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	s.writeJSON(w, http.StatusOK, s.OpenAPI())
}

var pathParamPattern = regexp.MustCompile(`\{([a-z_]+)\}`)

// pathParams returns the names of the parameters of a path pattern.
func pathParams(path string) []string {
	var names []string
	for _, m := range pathParamPattern.FindAllStringSubmatch(path, -1) {
		names = append(names, m[1])
	}
	return names
}

// operationID names a route: its method and path, as in
// get_api_v1_task_types_type.
func operationID(rt Route) string {
	return strings.ToLower(rt.Method) + strings.NewReplacer("/", "_", "-", "_", "{", "", "}", "", ".", "_").Replace(rt.Path)
}

// schemaGen derives JSON Schemas from Go types, naming each struct once in
// components.schemas.
type schemaGen struct {
	defs map[string]any
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	uuidType            = reflect.TypeFor[uuid.UUID]()
	rawType             = reflect.TypeFor[json.RawMessage]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	durationDescription = `a duration: "64d", "12h", "1d12h", "90 days", "0" (none)`
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == uuidType:
		return map[string]any{"type": "string", "format": "uuid"}
	case t == rawType:
		return map[string]any{"description": "any JSON value"}
	case t.Kind() != reflect.Pointer && t.Implements(textMarshalerType):
		return map[string]any{"type": "string", "description": durationDescription}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := g.schema(t.Elem())
		if _, ref := s["$ref"]; ref {
			return map[string]any{"allOf": []any{s}, "nullable": true}
		}
		s["nullable"] = true
		return s
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{"description": "any JSON value"}
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return g.object(t)
		}
		name = strings.ToUpper(name[:1]) + name[1:]
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = map[string]any{} // breaks cycles
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// object is the schema of a struct's JSON fields, embedded structs
// inlined.
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	g.fields(t, props)
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func (g *schemaGen) fields(t reflect.Type, props map[string]any) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
	}
}
