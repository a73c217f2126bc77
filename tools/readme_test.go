package tools

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExample: the README's example of the format is what the
// package writes.
func TestReadmeExample(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	line := func(prefix string) string {
		for l := range strings.Lines(string(data)) {
			if strings.HasPrefix(l, prefix) {
				return strings.TrimSuffix(l, "\n")
			}
		}
		t.Fatalf("README has no line starting %q", prefix)
		return ""
	}
	decl, err := RenderDeclarations([]Declaration{{Name: "get_weather", Description: "Weather for a city", Parameters: schema(t,
		`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := line(DeclOpen); got != decl.String()+"<turn|>" {
		t.Errorf("README's declaration:\n%s\nthe package writes\n%s", got, decl)
	}
	call, _ := RenderCalls([]Call{{Name: "get_weather", Args: map[string]any{"city": "Paris"}}})
	resp, _ := RenderResponses([]Response{{Name: "get_weather", Value: "15 °C, sunny"}})
	if got := line(CallOpen); !strings.HasPrefix(got, call.String()+resp.String()) {
		t.Errorf("README's call and result:\n%s\nthe package writes\n%s%s", got, call, resp)
	}
}
