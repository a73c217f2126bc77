package tools

import (
	"fmt"
	"slices"
	"strings"
)

// Declaration offers the model one function.
type Declaration struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object as encoding/json decodes it (an
	// MCP tool's input schema); nil declares no parameters.
	Parameters map[string]any
}

// RenderDeclarations writes the declarations for the system turn, one
// <|tool>declaration:NAME{…}<tool|> block each, as the Gemma 4 chat
// template writes them: keys sorted, type names upper-cased, only the
// schema keywords the template knows (description, type, properties,
// required, enum for strings, items for arrays, nullable).
func RenderDeclarations(ds []Declaration) (Text, error) {
	var w writer
	for _, d := range ds {
		w.declaration(d)
	}
	return w.result()
}

func (w *writer) declaration(d Declaration) {
	w.block(DeclOpen, "declaration", d.Name, DeclClose, func() {
		w.lit("description:")
		w.str(d.Description)
		p := d.Parameters
		if len(p) == 0 {
			return
		}
		path := d.Name + ".parameters"
		w.lit(",parameters:{")
		c := comma{w: w}
		if props, ok := p["properties"].(map[string]any); ok && len(props) > 0 {
			c.next()
			w.lit("properties:{")
			w.properties(path, props, false, 1)
			w.lit("}")
		}
		if req := stringList(p["required"]); len(req) > 0 {
			c.next()
			w.lit("required:")
			w.value(path+".required", req, true, 1)
		}
		if t, ok := p["type"].(string); ok && t != "" {
			c.next()
			w.lit("type:")
			w.str(strings.ToUpper(t))
		}
		w.lit("}")
	})
}

// comma writes "," before every item but the first.
type comma struct {
	w    *writer
	more bool
}

func (c *comma) next() {
	if c.more {
		c.w.lit(",")
	}
	c.more = true
}

// schemaKeywords are the keys the template reads from a property itself;
// an object property without "properties" has its other keys taken as its
// properties.
func schemaKeyword(k string) bool {
	switch k {
	case "description", "type", "properties", "required", "nullable":
		return true
	}
	return false
}

// properties writes a properties map: NAME:{description…,type:…} for each
// property whose value is a schema object, in sorted order.
func (w *writer) properties(path string, props map[string]any, onlyOthers bool, depth int) {
	if depth > MaxDepth {
		w.fail("tools: %s: nested deeper than %d levels", path, MaxDepth)
		return
	}
	first := true
	for _, name := range sortedKeys(props) {
		prop, ok := props[name].(map[string]any)
		if !ok || onlyOthers && schemaKeyword(name) {
			continue
		}
		if !first {
			w.lit(",")
		}
		first = false
		w.property(path+"."+name, name, prop, depth)
	}
}

func (w *writer) property(path, name string, prop map[string]any, depth int) {
	w.key(name, false)
	w.lit("{")
	c := comma{w: w}
	if d, ok := prop["description"].(string); ok && d != "" {
		c.next()
		w.lit("description:")
		w.str(d)
	}
	typ := typeName(prop)
	switch typ {
	case "STRING":
		if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
			c.next()
			w.lit("enum:")
			w.value(path+".enum", enum, true, depth+1)
		}
	case "ARRAY":
		if items, ok := prop["items"].(map[string]any); ok && len(items) > 0 {
			c.next()
			w.lit("items:{")
			w.items(path+".items", items, depth+1)
			w.lit("}")
		}
	}
	if b, ok := prop["nullable"].(bool); ok && b {
		c.next()
		w.lit("nullable:true")
	}
	if typ == "OBJECT" {
		c.next()
		w.lit("properties:{")
		if props, ok := prop["properties"].(map[string]any); ok {
			w.properties(path, props, false, depth+1)
		} else {
			w.properties(path, prop, true, depth+1)
		}
		w.lit("}")
		if req := stringList(prop["required"]); len(req) > 0 {
			c.next()
			w.lit("required:")
			w.value(path+".required", req, true, depth+1)
		}
	}
	// The template writes the type even when the schema has none.
	c.next()
	w.lit("type:")
	w.str(typ)
	w.lit("}")
}

// items writes an array's item schema, every key in sorted order.
func (w *writer) items(path string, items map[string]any, depth int) {
	c := comma{w: w}
	for _, k := range sortedKeys(items) {
		v := items[k]
		if v == nil {
			continue
		}
		c.next()
		switch k {
		case "properties":
			w.lit("properties:{")
			if props, ok := v.(map[string]any); ok {
				w.properties(path, props, false, depth+1)
			}
			w.lit("}")
		case "required":
			w.lit("required:")
			w.value(path+".required", stringList(v), true, depth+1)
		case "type":
			w.lit("type:")
			switch t := v.(type) {
			case string:
				w.str(strings.ToUpper(t))
			default:
				upper := stringList(t)
				for i := range upper {
					upper[i] = strings.ToUpper(upper[i])
				}
				w.value(path+".type", upper, true, depth+1)
			}
		default:
			w.key(k, false)
			w.value(path+"."+k, v, true, depth+1)
		}
	}
}

// typeName is a property's type as the template writes it: the name
// upper-cased, a list of names as Python prints the upper-cased list
// (['STRING', 'NULL']), "" when there is none. A property without a type
// whose anyOf only lists bare types takes their union (pydantic writes
// optional fields so), as ollama's renderer does.
func typeName(prop map[string]any) string {
	t, ok := prop["type"]
	if !ok {
		t = anyOfTypes(prop["anyOf"])
	}
	switch t := t.(type) {
	case string:
		return strings.ToUpper(t)
	case []any, []string:
		names := stringList(t)
		if len(names) == 1 {
			return strings.ToUpper(names[0])
		}
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("'%s'", strings.ToUpper(n))
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return ""
}

// anyOfTypes returns the types of an anyOf whose branches are all
// {"type": NAME}, in order and without repeats; nil otherwise.
func anyOfTypes(v any) any {
	branches, ok := v.([]any)
	if !ok || len(branches) == 0 {
		return nil
	}
	var out []string
	for _, b := range branches {
		m, ok := b.(map[string]any)
		if !ok || len(m) != 1 {
			return nil
		}
		t, ok := m["type"].(string)
		if !ok {
			return nil
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// stringList returns the strings of a JSON array (other elements are
// skipped, as the template would print them oddly); nil if v is none.
func stringList(v any) []string {
	switch v := v.(type) {
	case []string:
		return append([]string(nil), v...)
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
