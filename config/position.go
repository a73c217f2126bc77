package config

import (
	"bytes"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// MaxKeys bounds the keys of a config file, counting every part of a
// dotted key or table name, and every table or array inside an array.
// orchard has about a hundred settings and key bindings; the bound keeps
// reading a file linear in its size: go-toml's decoder checks each key
// against all those before it (a file of 60,000 keys took 26 s), so it
// never sees more than this many.
const MaxKeys = 1000

// keyIndex is what one walk of a document with go-toml's parser learns
// before it is decoded: the line that first defines each key of up to
// recordParts parts (tables included), which the decoder does not give,
// and whether the document has more than MaxKeys keys.
type keyIndex struct {
	lines map[string]int
	keys  int // key parts counted, up to MaxKeys+1
	over  int // line of the key past MaxKeys; 0 when within
}

// recordParts is the most parts of a key the schema has:
// mcp.servers.NAME.command.
const recordParts = 4

// scanKeys walks data with go-toml's parser. It stops at the first syntax
// error (the decoder reports it) or past MaxKeys. Its work and memory are
// linear in len(data): lines are counted forward from the last key rather
// than from the start, and only the first recordParts parts of a key are
// joined into names.
func scanKeys(data []byte) keyIndex {
	ix := keyIndex{lines: map[string]int{}}
	var p unstable.Parser
	p.Reset(data)
	lc := lineCounter{data: data, line: 1}
	// add counts the parts of n's key after prefix (a section and key
	// the value lies in, when record) and records the first two.
	add := func(prefix []string, n *unstable.Node, record bool) ([]string, bool) {
		parts := prefix[:len(prefix):len(prefix)]
		it := n.Key()
		for it.Next() {
			k := it.Node()
			if ix.keys++; ix.keys > MaxKeys {
				ix.over = lc.at(int(k.Raw.Offset))
				return nil, false
			}
			if !record || len(parts) >= recordParts {
				continue
			}
			parts = append(parts, string(k.Data))
			name := strings.Join(parts, ".")
			if _, ok := ix.lines[name]; !ok {
				ix.lines[name] = lc.at(int(k.Raw.Offset))
			}
		}
		return parts, true
	}
	var value func(parts []string, v *unstable.Node, record bool) bool
	keyValue := func(prefix []string, n *unstable.Node, record bool) bool {
		parts, ok := add(prefix, n, record)
		return ok && value(parts, n.Value(), record)
	}
	// value counts the keys of inline tables, also inside arrays (whose
	// tables are not recorded: no setting is one).
	value = func(parts []string, v *unstable.Node, record bool) bool {
		switch v.Kind {
		case unstable.InlineTable:
			it := v.Children()
			for it.Next() {
				if !keyValue(parts, it.Node(), record) {
					return false
				}
			}
		case unstable.Array:
			it := v.Children()
			for it.Next() {
				e := it.Node()
				// go-toml's decoder keeps a table or array in an array
				// as a key of its own.
				if e.Kind == unstable.InlineTable || e.Kind == unstable.Array {
					if ix.keys++; ix.keys > MaxKeys {
						ix.over = lc.line // an array's node has no position
						if e.Raw.Length > 0 {
							ix.over = lc.at(int(e.Raw.Offset))
						}
						return false
					}
				}
				if !value(nil, e, false) {
					return false
				}
			}
		}
		return true
	}
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		ok := true
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table, ok = add(nil, e, true)
		case unstable.KeyValue:
			ok = keyValue(table, e, true)
		}
		if !ok {
			break
		}
	}
	return ix
}

// lineCounter gives the line of an offset, counting newlines from the
// offset asked last: a walk in document order counts each byte once.
type lineCounter struct {
	data      []byte
	pos, line int
}

func (c *lineCounter) at(off int) int {
	off = min(max(off, 0), len(c.data))
	if off >= c.pos {
		c.line += bytes.Count(c.data[c.pos:off], []byte{'\n'})
	} else {
		c.line -= bytes.Count(c.data[off:c.pos], []byte{'\n'})
	}
	c.pos = off
	return c.line
}
