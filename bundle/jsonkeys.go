package bundle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// decodeKeeping decodes a JSON object into v (a pointer to a struct with
// json tags) and returns the keys v does not know, so unknown keys are
// kept and shown rather than rejected or lost. Type errors name the key.
func decodeKeeping(data []byte, v any) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if ok := asTypeError(err, &te); ok {
			return nil, fmt.Errorf("key %q: %s is not a %s", te.Field, te.Value, te.Type)
		}
		return nil, err
	}
	known := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			known[name] = true
		}
	}
	extra := map[string]json.RawMessage{}
	for k, val := range raw {
		if !known[k] {
			extra[k] = val
		}
	}
	if len(extra) == 0 {
		extra = nil
	}
	return extra, nil
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = t
	}
	return ok
}
