package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// KeyError is an error about one key of a YAML document or one setting.
type KeyError struct {
	// Key is the dotted path of the key ("log.level", "[2].backend_name").
	Key string
	// Line is the line of the YAML document, 0 when unknown.
	Line int
	// Unknown is true when the key itself is not known.
	Unknown bool
	Err     error
}

// Error says which key is wrong, and why.
func (e *KeyError) Error() string {
	var s string
	if e.Unknown {
		s = fmt.Sprintf("unknown key %q", e.Key)
	} else {
		s = fmt.Sprintf("%s: %v", e.Key, e.Err)
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d)", e.Line)
	}
	return s
}

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// DecodeYAML decodes a YAML document into v (a pointer), strictly: a key
// that matches no `yaml` tag of the target struct, or a value of the wrong
// type, is a *KeyError naming the key by its dotted path. Fields absent from
// the document keep the values v already holds, so v may carry defaults.
// An empty document changes nothing.
func DecodeYAML(data []byte, v any) error { return decodeYAMLSeen(data, v, nil) }

func decodeYAMLSeen(data []byte, v any, seen map[string]bool) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not valid YAML: %s", oneLine(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	if doc.Kind == 0 {
		return nil
	}
	return decodeInto(&doc, v, seen)
}

// DecodeNode is DecodeYAML for a parsed node.
func DecodeNode(n *yaml.Node, v any) error { return decodeInto(n, v, nil) }

// decodeInto decodes n into v and adds to seen (when not nil) the dotted
// key of every setting the document sets.
func decodeInto(n *yaml.Node, v any, seen map[string]bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("DecodeNode: target is not a pointer")
	}
	return decodeNode(n, rv.Elem(), "", seen)
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!null" {
		return "null"
	}
	return strconv.Quote(n.Value)
}

func decodeNode(n *yaml.Node, v reflect.Value, path string, seen map[string]bool) error {
	if seen != nil && isLeaf(v.Type()) {
		seen[path] = true
	}
	for n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) == 0 {
			return nil
		} else {
			n = n.Content[0]
		}
	}
	wrong := func(want string) error {
		key := path
		if key == "" {
			key = "(document)"
		}
		return &KeyError{Key: key, Line: n.Line, Err: fmt.Errorf("want %s, got %s", want, describe(n))}
	}
	isNull := n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
	if v.Kind() == reflect.Pointer {
		if isNull {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decodeNode(n, v.Elem(), path, seen)
	}
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode || isNull {
			return wrong("a scalar")
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			return &KeyError{Key: path, Line: n.Line, Err: err}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		if isNull {
			return nil // an empty section
		}
		if n.Kind != yaml.MappingNode {
			return wrong("a mapping")
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			f, ok := fieldByKey(v, k.Value)
			if !ok {
				return &KeyError{Key: join(path, k.Value), Line: k.Line, Unknown: true}
			}
			if err := decodeNode(val, f, join(path, k.Value), seen); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if isNull {
			return nil
		}
		if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
			return wrong("a mapping")
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			elem := reflect.New(v.Type().Elem()).Elem()
			if old := v.MapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key())); old.IsValid() {
				elem.Set(old)
			}
			if err := decodeNode(val, elem, join(path, k.Value), nil); err != nil {
				return err
			}
			v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
		}
		return nil
	case reflect.Slice:
		if isNull {
			v.SetZero()
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return wrong("a list")
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			if err := decodeNode(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i), nil); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			return &KeyError{Key: path, Line: n.Line, Err: errors.New(oneLine(err.Error()))}
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		} else {
			v.SetZero()
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return wrong("a " + kindName(v.Kind()))
	}
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.String:
		if tag != "!!str" {
			return wrong("a string (quote it)")
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if tag != "!!bool" {
			return wrong("true or false")
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			return wrong("true or false")
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil || v.OverflowInt(i) {
			return wrong("an integer")
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var i uint64
		if tag != "!!int" || n.Decode(&i) != nil || v.OverflowUint(i) {
			return wrong("a non-negative integer")
		}
		v.SetUint(i)
	case reflect.Float32, reflect.Float64:
		var f float64
		if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
			return wrong("a number")
		}
		v.SetFloat(f)
	default:
		return &KeyError{Key: path, Line: n.Line, Err: fmt.Errorf("cannot be set (%s)", v.Type())}
	}
	return nil
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	if k >= reflect.Int && k <= reflect.Uint64 {
		return "integer"
	}
	return k.String()
}

// yamlName returns the key a struct field is known by, or "" for fields
// that have none (unexported, or tagged "-").
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" && name == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// setString sets a scalar target from its text form, as environment
// variables and flags give it.
func setString(v reflect.Value, s string) error {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshaler) {
		return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(i) {
			return fmt.Errorf("want an integer, got %q", s)
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v.OverflowUint(i) {
			return fmt.Errorf("want a non-negative integer, got %q", s)
		}
		v.SetUint(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", s)
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("cannot be set from text (%s)", v.Type())
	}
	return nil
}

// isLeaf reports whether a field of type t is one setting (settable from an
// environment variable or a flag) rather than a section.
func isLeaf(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return true
	}
	if t.Kind() == reflect.Pointer {
		return isLeaf(t.Elem())
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Interface:
		return false
	}
	return true
}

// leafKeys lists the dotted keys of the settings of struct type t, in field
// order, descending into nested structs (not into maps or lists, whose
// keys are data).
func leafKeys(t reflect.Type, path string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		switch {
		case isLeaf(f.Type):
			keys = append(keys, join(path, name))
		case f.Type.Kind() == reflect.Struct:
			keys = append(keys, leafKeys(f.Type, join(path, name))...)
		}
	}
	return keys
}

// lookup returns the field of v at a dotted key.
func lookup(v reflect.Value, key string) (reflect.Value, bool) {
	for part := range strings.SplitSeq(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := fieldByKey(v, part)
		if !ok {
			return reflect.Value{}, false
		}
		v = f
	}
	return v, true
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
