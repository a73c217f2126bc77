package sidecars

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// NPY is a memory-mapped 2-D little-endian fp16 NumPy array, such as the
// stateful3 RoPE tables.
type NPY struct {
	Shape []int // [rows, cols]

	path    string
	data    []byte // the array bytes, after the header
	release func() error
}

const npyMagic = "\x93NUMPY"

// OpenNPY maps a .npy file of format version 1.0 or 2.0 holding a C-order
// '<f2' 2-D array, and checks that the file size matches the header.
func OpenNPY(path string) (*NPY, error) {
	raw, release, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("npy %s: %w", path, err)
	}
	n, err := parseNPY(raw)
	if err != nil {
		release()
		return nil, fmt.Errorf("npy %s: %w", path, err)
	}
	n.path, n.release = path, release
	return n, nil
}

func parseNPY(raw []byte) (*NPY, error) {
	if len(raw) < 10 || string(raw[:6]) != npyMagic {
		return nil, errors.New("not a NumPy file (bad magic)")
	}
	var hlen, start int
	switch major, minor := raw[6], raw[7]; {
	case major == 1 && minor == 0:
		hlen, start = int(binary.LittleEndian.Uint16(raw[8:10])), 10
	case major == 2 && minor == 0:
		if len(raw) < 12 {
			return nil, errors.New("truncated version 2.0 header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(raw[8:12])), 12
	default:
		return nil, fmt.Errorf("unsupported format version %d.%d (want 1.0 or 2.0)", major, minor)
	}
	if hlen > len(raw)-start {
		return nil, fmt.Errorf("header length %d runs past the end of the %d-byte file", hlen, len(raw))
	}
	h, err := parseNPYHeader(string(raw[start : start+hlen]))
	if err != nil {
		return nil, err
	}
	if h.descr != "<f2" {
		return nil, fmt.Errorf("dtype %q, want '<f2' (little-endian fp16)", h.descr)
	}
	if h.fortran {
		return nil, errors.New("fortran_order is True, want C order")
	}
	if len(h.shape) != 2 {
		return nil, fmt.Errorf("shape has %d dimensions, want 2", len(h.shape))
	}
	rows, cols := h.shape[0], h.shape[1]
	off := int64(start + hlen)
	// A shape whose byte count overflows could wrap around to the file's
	// size and pass the check below.
	if rows > 0 && int64(cols) > (math.MaxInt64-off)/2/int64(rows) {
		return nil, fmt.Errorf("shape (%d, %d) is too large for any file", rows, cols)
	}
	want := off + int64(rows)*int64(cols)*2
	if int64(len(raw)) != want {
		return nil, fmt.Errorf("size %d bytes, want %d header + %d×%d×2 = %d",
			len(raw), off, rows, cols, want)
	}
	return &NPY{Shape: []int{rows, cols}, data: raw[off:]}, nil
}

type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
}

// parseNPYHeader reads the Python dict literal NumPy writes, for example
// "{'descr': '<f2', 'fortran_order': False, 'shape': (8192, 256), }".
// It needs exactly the three keys NumPy requires.
func parseNPYHeader(s string) (npyHeader, error) {
	var h npyHeader
	p := &pyLexer{s: strings.TrimRight(s, " \n")}
	if !p.eat('{') {
		return h, errors.New("header is not a dict")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return h, fmt.Errorf("header key: %w", err)
		}
		if seen[key] {
			return h, fmt.Errorf("header repeats key %q", key)
		}
		seen[key] = true
		if !p.eat(':') {
			return h, fmt.Errorf("header: missing ':' after %q", key)
		}
		switch key {
		case "descr":
			h.descr, err = p.str()
		case "fortran_order":
			h.fortran, err = p.boolean()
		case "shape":
			h.shape, err = p.tuple()
		default:
			return h, fmt.Errorf("header has unexpected key %q", key)
		}
		if err != nil {
			return h, fmt.Errorf("header %q: %w", key, err)
		}
		if !p.eat(',') && !p.peek('}') {
			return h, errors.New("header: missing ',' between entries")
		}
	}
	if p.skip(); p.i != len(p.s) {
		return h, errors.New("header: trailing text after the dict")
	}
	if len(seen) != 3 {
		return h, errors.New("header lacks one of 'descr', 'fortran_order', 'shape'")
	}
	return h, nil
}

// pyLexer reads the few Python literals a .npy header uses.
type pyLexer struct {
	s string
	i int
}

func (p *pyLexer) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *pyLexer) peek(c byte) bool {
	p.skip()
	return p.i < len(p.s) && p.s[p.i] == c
}

func (p *pyLexer) eat(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

func (p *pyLexer) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyLexer) boolean() (bool, error) {
	p.skip()
	for _, w := range []string{"False", "True"} {
		if strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, errors.New("want True or False")
}

func (p *pyLexer) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("want a tuple")
	}
	var dims []int
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		d, err := strconv.Atoi(p.s[p.i:j])
		if err != nil || d < 0 {
			return nil, errors.New("want a non-negative integer dimension")
		}
		p.i = j
		dims = append(dims, d)
		if !p.eat(',') && !p.peek(')') {
			return nil, errors.New("missing ',' in tuple")
		}
	}
	return dims, nil
}

// Row writes row r's Shape[1] fp16 values into dst.
func (n *NPY) Row(r int, dst []uint16) error {
	rows, cols := n.Shape[0], n.Shape[1]
	switch {
	case n.data == nil && rows*cols > 0:
		return fmt.Errorf("npy %s: closed", n.path)
	case r < 0 || r >= rows:
		return fmt.Errorf("npy %s: row %d out of range [0,%d)", n.path, r, rows)
	case len(dst) < cols:
		return fmt.Errorf("npy %s: destination holds %d values, want %d", n.path, len(dst), cols)
	}
	copyF16(dst[:cols], n.data[2*r*cols:2*(r+1)*cols])
	return nil
}

// Close unmaps the file. It is safe to call more than once.
func (n *NPY) Close() error {
	if n.release == nil {
		return nil
	}
	err := n.release()
	n.release, n.data = nil, nil
	return err
}

// npyAlign is NumPy's ARRAY_ALIGN: the data starts on a 64-byte boundary.
const npyAlign = 64

// npyHeaderV1 builds the version 1.0 preamble and header NumPy writes for a
// C-order '<f2' [rows, cols] array: the dict, spare spaces so the first axis
// can grow to 21 digits in place, then space padding and '\n' so the header
// ends on a 64-byte boundary (NumPy always pads by at least one byte).
func npyHeaderV1(rows, cols int) []byte {
	d := fmt.Sprintf("{'descr': '<f2', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	d += strings.Repeat(" ", max(0, 21-len(strconv.Itoa(rows))))
	hlen := len(d) + 1
	pad := npyAlign - (len(npyMagic)+4+hlen)%npyAlign
	total := hlen + pad
	b := make([]byte, 0, 10+total)
	b = append(b, npyMagic...)
	b = append(b, 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(total))
	b = append(b, d...)
	b = append(b, strings.Repeat(" ", pad)...)
	return append(b, '\n')
}

// WriteNPY writes a [rows, cols] fp16 array as a version 1.0 .npy file,
// atomically and with mode 0600.
func WriteNPY(path string, rows, cols int, data []uint16) error {
	if rows < 0 || cols < 0 || len(data) != rows*cols {
		return fmt.Errorf("npy %s: %d values for shape %d×%d", path, len(data), rows, cols)
	}
	return writeAtomic(path, func(w io.Writer) error {
		if _, err := w.Write(npyHeaderV1(rows, cols)); err != nil {
			return err
		}
		return writeF16(w, data)
	})
}
