// Package safetensors reads and writes the Hugging Face safetensors format:
// an 8-byte little-endian header length, a JSON header mapping tensor names
// to dtype, shape and data_offsets (plus an optional "__metadata__" map of
// strings), then the tensor bytes.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/regfile"
)

// maxHeader bounds the JSON header, as the reference implementation does,
// so a corrupt length cannot make Open allocate gigabytes.
const maxHeader = 100_000_000

const metadataKey = "__metadata__"

// dtypeSize is the element size of every dtype the format defines; ok is
// false for an unknown dtype.
func dtypeSize(dtype string) (size int, ok bool) {
	switch dtype {
	case "BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2":
		return 1, true
	case "U16", "I16", "F16", "BF16":
		return 2, true
	case "U32", "I32", "F32":
		return 4, true
	case "U64", "I64", "F64":
		return 8, true
	}
	return 0, false
}

// Info describes one tensor. Begin and End are byte offsets into the data
// section, which starts right after the header.
type Info struct {
	DType      string
	Shape      []int
	Begin, End int64
}

// File is an open safetensors file.
type File struct {
	Tensors  map[string]Info
	Metadata map[string]string

	path    string
	f       *os.File
	dataOff int64 // file offset of the data section
}

// Open reads and validates the header of path: every tensor has a known
// dtype, a byte size equal to product(shape)*dtype size, and the tensors tile
// the data section exactly, without gaps or overlaps.
func Open(path string) (*File, error) {
	// A FIFO in the file's place would block the open until a writer
	// came: `orchard run` hung on one.
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	st, err := parse(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	st.path, st.f = path, f
	return st, nil
}

func parse(f *os.File) (*File, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("reading header length: file is %d bytes", size)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeader {
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit", n, maxHeader)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("header length %d runs past the end of the %d-byte file", n, size)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	st := &File{Tensors: map[string]Info{}, dataOff: 8 + int64(n)}
	if err := st.parseHeader(hdr); err != nil {
		return nil, err
	}
	if err := st.validate(size - st.dataOff); err != nil {
		return nil, err
	}
	return st, nil
}

type rawInfo struct {
	DType   *string  `json:"dtype"`
	Shape   *[]int   `json:"shape"`
	Offsets *[]int64 `json:"data_offsets"`
}

func (st *File) parseHeader(hdr []byte) error {
	if len(bytes.TrimSpace(hdr)) == 0 || bytes.TrimLeft(hdr, " \t\r\n")[0] != '{' {
		return errors.New("header is not a JSON object")
	}
	// Walk the top-level object by tokens so repeated names are caught;
	// decoding into a map would silently keep the last one.
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("header: %w", err)
		}
		name := tok.(string) // object keys are always strings
		if seen[name] {
			return fmt.Errorf("header: %q appears twice", name)
		}
		seen[name] = true
		if name == metadataKey {
			if err := dec.Decode(&st.Metadata); err != nil {
				return fmt.Errorf("header: %s must map strings to strings: %w", metadataKey, err)
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("header: tensor %q: %w", name, err)
		}
		var ri rawInfo
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&ri); err != nil {
			return fmt.Errorf("header: tensor %q: %w", name, err)
		}
		info, err := ri.check()
		if err != nil {
			return fmt.Errorf("header: tensor %q: %w", name, err)
		}
		st.Tensors[name] = info
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("header: trailing data after the JSON object")
	}
	return nil
}

func (ri rawInfo) check() (Info, error) {
	switch {
	case ri.DType == nil:
		return Info{}, errors.New("missing dtype")
	case ri.Shape == nil:
		return Info{}, errors.New("missing shape")
	case ri.Offsets == nil:
		return Info{}, errors.New("missing data_offsets")
	case len(*ri.Offsets) != 2:
		return Info{}, fmt.Errorf("data_offsets has %d entries, want 2", len(*ri.Offsets))
	}
	info := Info{DType: *ri.DType, Shape: *ri.Shape, Begin: (*ri.Offsets)[0], End: (*ri.Offsets)[1]}
	if info.Shape == nil {
		info.Shape = []int{}
	}
	es, ok := dtypeSize(info.DType)
	if !ok {
		return Info{}, fmt.Errorf("unknown dtype %q", info.DType)
	}
	if info.Begin < 0 || info.End < info.Begin {
		return Info{}, fmt.Errorf("data_offsets [%d, %d] are not an ordered range", info.Begin, info.End)
	}
	want := int64(es)
	for _, d := range info.Shape {
		if d < 0 {
			return Info{}, fmt.Errorf("negative dimension in shape %v", info.Shape)
		}
		if d != 0 && want > math.MaxInt64/int64(d) {
			return Info{}, fmt.Errorf("shape %v overflows", info.Shape)
		}
		want *= int64(d)
	}
	if got := info.End - info.Begin; got != want {
		return Info{}, fmt.Errorf("%d bytes for %s shape %v, want %d", got, info.DType, info.Shape, want)
	}
	return info, nil
}

// validate checks that the tensors tile [0, dataLen) exactly.
func (st *File) validate(dataLen int64) error {
	names := st.Names()
	sort.SliceStable(names, func(i, j int) bool {
		a, b := st.Tensors[names[i]], st.Tensors[names[j]]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.End < b.End
	})
	var end int64
	prev := ""
	for _, name := range names {
		t := st.Tensors[name]
		switch {
		case t.Begin < end:
			return fmt.Errorf("tensor %q [%d, %d) overlaps %q ending at %d", name, t.Begin, t.End, prev, end)
		case t.Begin > end:
			return fmt.Errorf("tensor %q starts at %d, leaving a gap after byte %d", name, t.Begin, end)
		}
		end, prev = t.End, name
	}
	if end != dataLen {
		return fmt.Errorf("tensors cover %d data bytes, file holds %d", end, dataLen)
	}
	return nil
}

// Names returns the tensor names in sorted order.
func (st *File) Names() []string {
	names := make([]string, 0, len(st.Tensors))
	for n := range st.Tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Float32 reads tensor name, converting F32, F16 and BF16 exactly to float32,
// and returns the values with a copy of the shape.
func (st *File) Float32(name string) ([]float32, []int, error) {
	t, ok := st.Tensors[name]
	if !ok {
		return nil, nil, fmt.Errorf("safetensors %s: no tensor %q", st.path, name)
	}
	if st.f == nil {
		return nil, nil, fmt.Errorf("safetensors %s: file is closed", st.path)
	}
	raw := make([]byte, t.End-t.Begin)
	if _, err := st.f.ReadAt(raw, st.dataOff+t.Begin); err != nil {
		return nil, nil, fmt.Errorf("safetensors %s: tensor %q: %w", st.path, name, err)
	}
	var out []float32
	switch t.DType {
	case "F32":
		out = make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "F16":
		out = make([]float32, len(raw)/2)
		for i := range out {
			out[i] = f16.ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case "BF16":
		out = make([]float32, len(raw)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	default:
		return nil, nil, fmt.Errorf("safetensors %s: tensor %q has dtype %s, want F32, F16 or BF16", st.path, name, t.DType)
	}
	return out, slices.Clone(t.Shape), nil
}

// Close closes the file.
func (st *File) Close() error {
	if st.f == nil {
		return nil
	}
	err := st.f.Close()
	st.f = nil
	return err
}
