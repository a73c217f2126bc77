package bundle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// decodeKeeping decodes a JSON object into v (a pointer to a struct with
// json tags) and returns the keys v does not know, so unknown keys are
// kept and shown rather than rejected or lost. An optional key (tagged
// omitempty) of the wrong type is read where the intent is plain — a
// number written as a string, a one-element list — else left at its
// default; either way a note says so. A required key of the wrong type is
// an error naming the key.
func decodeKeeping(data []byte, v any) (extra map[string]json.RawMessage, notes []string, err error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if !asTypeError(err, &te) {
			return nil, nil, err
		}
		if notes, err = decodeFields(raw, v); err != nil {
			return nil, nil, err
		}
	}
	known := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			known[name] = true
		}
	}
	extra = map[string]json.RawMessage{}
	for k, val := range raw {
		if !known[k] {
			extra[k] = val
		}
	}
	if len(extra) == 0 {
		extra = nil
	}
	return extra, notes, nil
}

// decodeFields decodes raw key by key into the struct v points to, after
// a whole-object decode failed on a type.
func decodeFields(raw map[string]json.RawMessage, v any) ([]string, error) {
	rv := reflect.ValueOf(v).Elem()
	t := rv.Type()
	var notes []string
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		val, ok := raw[name]
		if name == "" || name == "-" || !ok {
			continue
		}
		field := rv.Field(i)
		fresh := reflect.New(field.Type())
		err := json.Unmarshal(val, fresh.Interface())
		if err == nil {
			field.Set(fresh.Elem())
			continue
		}
		var te *json.UnmarshalTypeError
		if !asTypeError(err, &te) {
			return nil, fmt.Errorf("key %q: %w", name, err)
		}
		if !strings.Contains(opts, "omitempty") {
			return nil, fmt.Errorf("key %q: %s is not a %s", name, te.Value, te.Type)
		}
		shown := termsafe.Quote(string(val))
		if coerced, ok := coerce(val, field.Type()); ok {
			field.Set(coerced)
			notes = append(notes, fmt.Sprintf("key %q: %s read as %v (want %s)", name, shown, jsonOf(coerced), typeWord(field.Type())))
			continue
		}
		notes = append(notes, fmt.Sprintf("key %q: %s is not %s; ignored, the default is used", name, shown, typeWord(field.Type())))
	}
	return notes, nil
}

// coerce reads an optional value written in a near form: a number in a
// string ("2048"), or a list of exactly one value ([1]).
func coerce(val json.RawMessage, typ reflect.Type) (reflect.Value, bool) {
	var s string
	if json.Unmarshal(val, &s) == nil {
		out := reflect.New(typ)
		if json.Unmarshal([]byte(strings.TrimSpace(s)), out.Interface()) == nil && s != "" {
			return out.Elem(), true
		}
	}
	var list []json.RawMessage
	if json.Unmarshal(val, &list) == nil && len(list) == 1 {
		out := reflect.New(typ)
		if json.Unmarshal(list[0], out.Interface()) == nil {
			return out.Elem(), true
		}
	}
	return reflect.Value{}, false
}

func jsonOf(v reflect.Value) string {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	b, _ := json.Marshal(v.Interface())
	return string(b)
}

// typeWord names what a field takes, for a note.
func typeWord(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = t
	}
	return ok
}
