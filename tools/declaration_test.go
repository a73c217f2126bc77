package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// schema decodes a JSON Schema as an MCP client receives it.
func schema(t *testing.T, js string) map[string]any {
	t.Helper()
	if js == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRenderDeclarations: the bytes the Gemma 4 chat template writes for
// each schema (worked out from its format_function_declaration and
// format_parameters macros).
func TestRenderDeclarations(t *testing.T) {
	const q = `<|"|>`
	cases := []struct {
		name, desc, params string
		want               string
	}{
		{"now", "The time", "",
			`<|tool>declaration:now{description:<|"|>The time<|"|>}<tool|>`},
		{"ping", "", `{"type":"object"}`,
			`<|tool>declaration:ping{description:<|"|><|"|>,parameters:{type:<|"|>OBJECT<|"|>}}<tool|>`},
		{"get_forecast", "Forecast for a city", `{"type":"object","properties":{
			"days":{"type":"integer","description":"How many days","minimum":1},
			"city":{"type":"string","description":"City name"}},"required":["city"]}`,
			`<|tool>declaration:get_forecast{description:<|"|>Forecast for a city<|"|>,parameters:{properties:{` +
				`city:{description:<|"|>City name<|"|>,type:<|"|>STRING<|"|>},` +
				`days:{description:<|"|>How many days<|"|>,type:<|"|>INTEGER<|"|>}},` +
				`required:[<|"|>city<|"|>],type:<|"|>OBJECT<|"|>}}<tool|>`},
		{"convert", "Units", `{"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]},"Zeta":{"type":"number"},"alpha":{"type":"boolean","nullable":true}}}`,
			`<|tool>declaration:convert{description:<|"|>Units<|"|>,parameters:{properties:{` +
				`alpha:{nullable:true,type:` + q + `BOOLEAN` + q + `},` +
				`unit:{enum:[<|"|>celsius<|"|>,<|"|>fahrenheit<|"|>],type:<|"|>STRING<|"|>},` +
				`Zeta:{type:<|"|>NUMBER<|"|>}},type:<|"|>OBJECT<|"|>}}<tool|>`},
		{"tag", "Arrays", `{"type":"object","properties":{
			"tags":{"type":"array","description":"Tags","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},
			"words":{"type":"array","items":{"type":"string","enum":["a","b"],"description":"A word"}},
			"mixed":{"type":"array","items":{"type":["string","number"]}},
			"any":{"type":"array"}}}`,
			`<|tool>declaration:tag{description:<|"|>Arrays<|"|>,parameters:{properties:{` +
				`any:{type:<|"|>ARRAY<|"|>},` +
				`mixed:{items:{type:[<|"|>STRING<|"|>,<|"|>NUMBER<|"|>]},type:<|"|>ARRAY<|"|>},` +
				`tags:{description:<|"|>Tags<|"|>,items:{properties:{name:{type:<|"|>STRING<|"|>}},required:[<|"|>name<|"|>],type:<|"|>OBJECT<|"|>},type:<|"|>ARRAY<|"|>},` +
				`words:{items:{description:<|"|>A word<|"|>,enum:[<|"|>a<|"|>,<|"|>b<|"|>],type:<|"|>STRING<|"|>},type:<|"|>ARRAY<|"|>}` +
				`},type:<|"|>OBJECT<|"|>}}<tool|>`},
		{"configure", "Objects", `{"type":"object","properties":{
			"config":{"type":"object","description":"Config","properties":{"debug":{"type":"boolean"},"level":{"type":"object","properties":{"n":{"type":"integer"}}}},"required":["debug"]},
			"meta":{"type":"object"},
			"free":{"type":"object","extra":{"type":"string","description":"An extra"}}}}`,
			`<|tool>declaration:configure{description:<|"|>Objects<|"|>,parameters:{properties:{` +
				`config:{description:<|"|>Config<|"|>,properties:{debug:{type:<|"|>BOOLEAN<|"|>},level:{properties:{n:{type:<|"|>INTEGER<|"|>}},type:<|"|>OBJECT<|"|>}},required:[<|"|>debug<|"|>],type:<|"|>OBJECT<|"|>},` +
				`free:{properties:{extra:{description:<|"|>An extra<|"|>,type:<|"|>STRING<|"|>}},type:<|"|>OBJECT<|"|>},` +
				`meta:{properties:{},type:<|"|>OBJECT<|"|>}` +
				`},type:<|"|>OBJECT<|"|>}}<tool|>`},
		{"unions", "Types", `{"type":"object","properties":{
			"name":{"type":["string","null"],"description":"N"},
			"opt":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Opt"},
			"untyped":{"description":"d"}}}`,
			`<|tool>declaration:unions{description:<|"|>Types<|"|>,parameters:{properties:{` +
				`name:{description:<|"|>N<|"|>,type:<|"|>['STRING', 'NULL']<|"|>},` +
				`opt:{type:<|"|>['STRING', 'NULL']<|"|>},` +
				`untyped:{description:<|"|>d<|"|>,type:<|"|><|"|>}` +
				`},type:<|"|>OBJECT<|"|>}}<tool|>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderDeclarations([]Declaration{{Name: tc.name, Description: tc.desc, Parameters: schema(t, tc.params)}})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
			// The body is well-formed in the format the parser reads.
			body := strings.TrimSuffix(strings.TrimPrefix(tc.want, DeclOpen+"declaration:"+tc.name), DeclClose)
			p := parser{s: body}
			if _, err := p.object(0); err != nil || p.i != len(body) {
				t.Errorf("the declaration's body does not parse: %v (at %d of %d)", err, p.i, len(body))
			}
		})
	}
}

// TestRenderDeclarationsStable: the same tools give the same bytes, every
// time, however their schemas' keys were ordered.
func TestRenderDeclarationsStable(t *testing.T) {
	a := schema(t, `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer","description":"x"}},"required":["a","b"]}`)
	b := schema(t, `{"required":["a","b"],"properties":{"a":{"description":"x","type":"integer"},"b":{"type":"string"}},"type":"object"}`)
	first, err := RenderDeclarations([]Declaration{{"f", "d", a}, {"g", "e", nil}})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := RenderDeclarations([]Declaration{{"f", "d", b}, {"g", "e", nil}})
		if err != nil {
			t.Fatal(err)
		}
		if again.String() != first.String() {
			t.Fatalf("renders differ:\n%s\n%s", first, again)
		}
	}
	if !strings.HasSuffix(first.String(), `<tool|><|tool>declaration:g{description:<|"|>e<|"|>}<tool|>`) {
		t.Errorf("two declarations are not one block after the other: %s", first)
	}
}

func TestRenderDeclarationsRefuses(t *testing.T) {
	deep := `{"type":"object","properties":{"x":` + strings.Repeat(`{"type":"object","properties":{"x":`, MaxDepth) +
		`{"type":"string"}` + strings.Repeat("}}", MaxDepth) + "}}"
	for _, d := range []Declaration{
		{Name: "bad name"},
		{Name: ""},
		{Name: "deep", Parameters: schema(t, deep)},
	} {
		if _, err := RenderDeclarations([]Declaration{d}); err == nil {
			t.Errorf("RenderDeclarations(%q) gave no error", d.Name)
		}
	}
}
