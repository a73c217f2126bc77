package config

import (
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines maps every dotted key of a TOML document (tables included) to
// the line that first defines it. The decoder gives values but not their
// lines, so the document is walked once more with go-toml's parser, which
// does. Call it only on a document that decoded without error.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	record := func(parts []string, n *unstable.Node) {
		for i := range parts {
			k := strings.Join(parts[:i+1], ".")
			if _, ok := lines[k]; !ok {
				lines[k] = p.Shape(n.Raw).Start.Line
			}
		}
	}
	var keyValue func(prefix []string, n *unstable.Node)
	keyValue = func(prefix []string, n *unstable.Node) {
		parts, first := keyParts(prefix, n)
		record(parts, first)
		if v := n.Value(); v.Kind == unstable.InlineTable {
			it := v.Children()
			for it.Next() {
				keyValue(parts, it.Node())
			}
		}
	}
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var first *unstable.Node
			table, first = keyParts(nil, e)
			record(table, first)
		case unstable.KeyValue:
			keyValue(table, e)
		}
	}
	return lines
}

// keyParts appends the parts of n's key to prefix and returns the first key node.
func keyParts(prefix []string, n *unstable.Node) ([]string, *unstable.Node) {
	parts := append([]string(nil), prefix...)
	var first *unstable.Node
	it := n.Key()
	for it.Next() {
		k := it.Node()
		if first == nil {
			first = k
		}
		parts = append(parts, string(k.Data))
	}
	return parts, first
}
