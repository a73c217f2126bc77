package tools

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchard-llm/orchard/internal/fuzzing"
)

// FuzzParse reads model replies: nothing panics, the events hold the
// whole reply, a Stream fed the reply in two pieces finds the same, and
// every call found renders to bytes that parse back to the same call.
func FuzzParse(f *testing.F) {
	for _, tc := range callCases {
		f.Add(tc.text, uint8(len(tc.text)/2))
	}
	for _, r := range streamReplies {
		f.Add(r, uint8(7))
	}
	f.Add(CallOpen+"call:f{a:"+strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)+"}"+CallClose, uint8(3))
	f.Add(CallOpen+`call:f{"k\u0000":"<|\"|>",n:-0.0e+0,b:[{},[],""]}`+CallClose, uint8(20))
	f.Fuzz(func(t *testing.T, reply string, cut uint8) {
		var events []Event
		fuzzing.Alloc(t, 64*uint64(len(reply))+1<<20, func() { events = Parse(reply) })
		var all strings.Builder
		for _, e := range events {
			all.WriteString(e.Text)
			if e.Kind == EventMalformed && e.Err == nil {
				t.Fatalf("a malformed call without its error: %q", e.Text)
			}
			if e.Kind != EventCall {
				continue
			}
			out, err := RenderCalls([]Call{e.Call})
			if err != nil {
				if holdsUnwritable(e.Call.Args) {
					continue
				}
				t.Fatalf("a parsed call does not render: %v (%q)", err, e.Text)
			}
			text, calls, err := Split(out.String())
			if err != nil || text != "" || len(calls) != 1 || !reflect.DeepEqual(calls[0], e.Call) {
				t.Fatalf("parse(render(%q)) = %q %#v %v, want %#v", e.Text, text, calls, err, e.Call)
			}
		}
		if all.String() != reply {
			t.Fatalf("the events' text %q is not the reply %q", all.String(), reply)
		}
		at := int(cut) % (len(reply) + 1)
		sameEvents(t, "two pieces", settled(collect([]string{reply[:at], reply[at:]})), events)
		_, _ = ParseCall(reply)
	})
}

// holdsUnwritable reports a string holding the delimiter and bytes that
// are not UTF-8: the only parsed value the renderer refuses.
func holdsUnwritable(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, Quote) && !utf8.ValidString(v)
	case []any:
		for _, e := range v {
			if holdsUnwritable(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if holdsUnwritable(k) || holdsUnwritable(e) {
				return true
			}
		}
	}
	return false
}
