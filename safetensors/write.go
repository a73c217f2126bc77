package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/f16"
)

// Writer collects tensors and writes them as one safetensors file on Close.
type Writer struct {
	path    string
	tensors map[string]pending
	err     error // first Add error, reported by Close
}

type pending struct {
	dtype string
	shape []int
	data  []byte
}

// Create starts a safetensors file at path; nothing is written until Close.
func Create(path string) *Writer {
	return &Writer{path: path, tensors: map[string]pending{}}
}

// Add stores vals as tensor name with the given dtype ("F32", "F16" or
// "BF16"), converting with round to nearest even. Errors (an unknown dtype, a
// repeated name, a value count that does not match shape) are returned by Close.
func (w *Writer) Add(name string, dtype string, shape []int, vals []float32) {
	if w.err != nil {
		return
	}
	n := 1
	for _, d := range shape {
		if d < 0 {
			w.err = fmt.Errorf("tensor %q: negative dimension in shape %v", name, shape)
			return
		}
		n *= d
	}
	switch {
	case name == metadataKey:
		w.err = fmt.Errorf("tensor name %q is reserved", name)
	case w.tensors[name].dtype != "":
		w.err = fmt.Errorf("tensor %q added twice", name)
	case n != len(vals):
		w.err = fmt.Errorf("tensor %q: %d values for shape %v", name, len(vals), shape)
	}
	if w.err != nil {
		return
	}
	var data []byte
	switch dtype {
	case "F32":
		data = make([]byte, 0, 4*n)
		for _, v := range vals {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
	case "F16":
		data = make([]byte, 0, 2*n)
		for _, v := range vals {
			data = binary.LittleEndian.AppendUint16(data, f16.FromF32(v))
		}
	case "BF16":
		data = make([]byte, 0, 2*n)
		for _, v := range vals {
			data = binary.LittleEndian.AppendUint16(data, toBF16(v))
		}
	default:
		w.err = fmt.Errorf("tensor %q: dtype %q, want F32, F16 or BF16", name, dtype)
		return
	}
	w.tensors[name] = pending{dtype: dtype, shape: slices.Clone(shape), data: data}
}

// toBF16 rounds to the nearest bfloat16, ties to even; NaN stays a quiet NaN.
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// Close writes the file atomically with mode 0600: the header lists
// "__metadata__" (if any) and then the tensors in sorted-name order, which is
// also their order in the data section; the header is padded with spaces to a
// multiple of 8 bytes.
func (w *Writer) Close(metadata map[string]string) error {
	if w.err != nil {
		return fmt.Errorf("safetensors %s: %w", w.path, w.err)
	}
	hdr, err := w.header(metadata)
	if err != nil {
		return fmt.Errorf("safetensors %s: %w", w.path, err)
	}
	if err := atomicfile.WriteFunc(w.path, func(f io.Writer) error { return w.writeTo(f, hdr) }); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}

func (w *Writer) names() []string {
	names := make([]string, 0, len(w.tensors))
	for n := range w.tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// header builds the compact JSON header, padded to 8 bytes.
func (w *Writer) header(metadata map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := func() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
	}
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString(`"` + metadataKey + `":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, k)
			b.WriteByte(':')
			writeString(&b, metadata[k])
		}
		b.WriteByte('}')
	}
	var off int64
	for _, name := range w.names() {
		t := w.tensors[name]
		sep()
		writeString(&b, name)
		b.WriteString(`:{"dtype":"` + t.dtype + `","shape":[`)
		for i, d := range t.shape {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(d))
		}
		end := off + int64(len(t.data))
		fmt.Fprintf(&b, `],"data_offsets":[%d,%d]}`, off, end)
		off = end
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	if b.Len() > maxHeader {
		return nil, fmt.Errorf("header of %d bytes exceeds the %d-byte limit", b.Len(), maxHeader)
	}
	return b.Bytes(), nil
}

// writeString writes s as a JSON string without HTML escaping, as the
// reference implementation's serializer does.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // drop Encode's newline
}

func (w *Writer) writeTo(out io.Writer, hdr []byte) error {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hdr)))
	if _, err := out.Write(n[:]); err != nil {
		return err
	}
	if _, err := out.Write(hdr); err != nil {
		return err
	}
	for _, name := range w.names() {
		if _, err := out.Write(w.tensors[name].data); err != nil {
			return err
		}
	}
	return nil
}
