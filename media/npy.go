package media

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/atomicfile"
)

// WriteNPYF16 writes fp16 values (as their bits) of the given shape to a
// NumPy .npy file ('<f2', C order), atomically and with mode 0600.
func WriteNPYF16(path string, shape []int, data []uint16) error {
	return writeNPY(path, "<f2", shape, len(data), func(b []byte, i int) { binary.LittleEndian.PutUint16(b, data[i]) }, 2)
}

// WriteNPYF32 writes float32 values as a '<f4' .npy file.
func WriteNPYF32(path string, shape []int, data []float32) error {
	return writeNPY(path, "<f4", shape, len(data), func(b []byte, i int) { binary.LittleEndian.PutUint32(b, math.Float32bits(data[i])) }, 4)
}

// WriteNPYI32 writes int32 values as a '<i4' .npy file.
func WriteNPYI32(path string, shape []int, data []int32) error {
	return writeNPY(path, "<i4", shape, len(data), func(b []byte, i int) { binary.LittleEndian.PutUint32(b, uint32(data[i])) }, 4)
}

func writeNPY(path, descr string, shape []int, n int, put func([]byte, int), size int) error {
	count := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("npy %s: negative dimension in shape %v", path, shape)
		}
		count *= d
	}
	if count != n {
		return fmt.Errorf("npy %s: %d values for shape %v (%d)", path, n, shape, count)
	}
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		if _, err := w.Write(npyHeader(descr, shape)); err != nil {
			return err
		}
		buf := make([]byte, 64<<10)
		for i := 0; i < n; {
			k := min(n-i, len(buf)/size)
			for j := range k {
				put(buf[j*size:], i+j)
			}
			if _, err := w.Write(buf[:k*size]); err != nil {
				return err
			}
			i += k
		}
		return nil
	})
}

// npyHeader is the version 1.0 preamble NumPy writes: magic, version, the
// header length, then the dict padded with spaces and '\n' so the data
// starts on a 64-byte boundary. A 1-D shape is written "(n,)" as Python
// spells a one-element tuple.
func npyHeader(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	d := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	const preamble = 10 // magic (6), version (2), header length (2)
	total := (preamble + len(d) + 1 + 63) / 64 * 64
	b := make([]byte, 0, total)
	b = append(b, "\x93NUMPY\x01\x00"...)
	b = binary.LittleEndian.AppendUint16(b, uint16(total-preamble))
	b = append(b, d...)
	b = append(b, strings.Repeat(" ", total-preamble-len(d)-1)...)
	return append(b, '\n')
}
