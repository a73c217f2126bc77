package sidecars

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNPYHeaderBytes(t *testing.T) {
	// What numpy.save writes for np.zeros((3, 4), '<f2'): the dict, 20 spare
	// spaces for the first axis, space padding to 128 bytes, '\n'.
	dict := "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 4), }"
	want := "\x93NUMPY\x01\x00\x76\x00" + dict + strings.Repeat(" ", 20+38) + "\n"
	if got := string(npyHeaderV1(3, 4)); got != want {
		t.Errorf("header\n%q, want\n%q", got, want)
	}
	// The published stateful3 RoPE tables have 128-byte headers.
	for _, s := range [][2]int{{8192, 256}, {8192, 512}, {4096, 512}} {
		if n := len(npyHeaderV1(s[0], s[1])); n != 128 {
			t.Errorf("header for %v is %d bytes, want 128", s, n)
		}
	}
	// A header already on a 64-byte boundary still gains a full pad (numpy
	// never pads by zero): every header ends in '\n' and is a multiple of 64.
	for rows := 1; rows < 1e7; rows = rows*10 + 1 {
		for cols := 1; cols < 1e6; cols = cols*7 + 3 {
			h := npyHeaderV1(rows, cols)
			if len(h)%64 != 0 || h[len(h)-1] != '\n' || int(binary.LittleEndian.Uint16(h[8:])) != len(h)-10 {
				t.Fatalf("bad header for %d×%d: %q", rows, cols, h)
			}
		}
	}
}

func TestNPYRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cos.npy")
	data := []uint16{0x3C00, 0x0001, 0xFBFF, 0x8000, 0x1234, 0x7BFF}
	if err := WriteNPY(p, 3, 2, data); err != nil {
		t.Fatal(err)
	}
	n, err := OpenNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.Shape[0] != 3 || n.Shape[1] != 2 {
		t.Fatalf("shape %v", n.Shape)
	}
	row := make([]uint16, 2)
	for r := range 3 {
		if err := n.Row(r, row); err != nil {
			t.Fatal(err)
		}
		if row[0] != data[2*r] || row[1] != data[2*r+1] {
			t.Errorf("row %d = %#04x, want %#04x", r, row, data[2*r:2*r+2])
		}
	}
	if err := n.Row(3, row); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("row past end: %v", err)
	}
	if err := n.Row(0, row[:1]); err == nil {
		t.Error("short destination accepted")
	}
	if n := testing.AllocsPerRun(100, func() { n.Row(1, row) }); n != 0 {
		t.Errorf("Row allocates %v times", n)
	}
	if err := WriteNPY(p, 2, 2, data); err == nil {
		t.Error("WriteNPY with the wrong length succeeded")
	}
}

// npyFile assembles a file from a raw header dict, for the rejection tests.
func npyFile(major byte, dict string, dataBytes int) []byte {
	b := []byte(npyMagic)
	b = append(b, major, 0)
	h := dict + "\n"
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
	}
	b = append(b, h...)
	return append(b, make([]byte, dataBytes)...)
}

func TestOpenNPY(t *testing.T) {
	const good = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }"
	tests := []struct {
		name string
		file []byte
		err  string // "" means accepted
	}{
		{"v1", npyFile(1, good, 12), ""},
		{"v2", npyFile(2, good, 12), ""},
		{"double quotes, no trailing comma", npyFile(1, `{"shape": (2, 3), "fortran_order": False, "descr": "<f2"}`, 12), ""},
		{"empty", nil, "bad magic"},
		{"magic", append([]byte("\x93NUMPZ\x01\x00\x00\x00"), good...), "bad magic"},
		{"version 3", npyFile(3, good, 12), "unsupported format version 3.0"},
		{"truncated v2", []byte(npyMagic + "\x02\x00\x10\x00"), "truncated"},
		{"header past end", append([]byte(npyMagic+"\x01\x00\xff\x00"), good...), "runs past the end"},
		{"big endian", npyFile(1, strings.Replace(good, "<f2", ">f2", 1), 12), `dtype ">f2"`},
		{"byte order free", npyFile(1, strings.Replace(good, "<f2", "|f2", 1), 12), `dtype "|f2"`},
		{"f4", npyFile(1, strings.Replace(good, "<f2", "<f4", 1), 24), `dtype "<f4"`},
		{"fortran", npyFile(1, strings.Replace(good, "False", "True", 1), 12), "fortran_order is True"},
		{"1-D", npyFile(1, strings.Replace(good, "(2, 3)", "(6,)", 1), 12), "1 dimensions, want 2"},
		{"3-D", npyFile(1, strings.Replace(good, "(2, 3)", "(1, 2, 3)", 1), 12), "3 dimensions, want 2"},
		{"short data", npyFile(1, good, 11), "want 70 header + 2×3×2 = 82"},
		{"long data", npyFile(1, good, 13), "size 83 bytes"},
		{"missing key", npyFile(1, "{'descr': '<f2', 'shape': (2, 3), }", 12), "lacks one of"},
		{"extra key", npyFile(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 12), `unexpected key "x"`},
		{"repeated key", npyFile(1, "{'descr': '<f2', 'descr': '<f2', 'fortran_order': False, 'shape': (2, 3)}", 12), `repeats key "descr"`},
		{"not a dict", npyFile(1, "['descr']", 12), "not a dict"},
		{"bad bool", npyFile(1, strings.Replace(good, "False", "0", 1), 12), "True or False"},
		{"bad dim", npyFile(1, strings.Replace(good, "(2, 3)", "(2, -3)", 1), 12), "non-negative integer"},
		{"unterminated", npyFile(1, "{'descr", 12), "unterminated"},
		{"trailing", npyFile(1, good+" x", 12), "trailing text"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "f"+string(rune('a'+i))+".npy")
			if err := os.WriteFile(p, tt.file, 0o600); err != nil {
				t.Fatal(err)
			}
			n, err := OpenNPY(p)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if n.Shape[0] != 2 || n.Shape[1] != 3 {
					t.Errorf("shape %v", n.Shape)
				}
				n.Close()
				return
			}
			if err == nil {
				n.Close()
				t.Fatalf("accepted, want error containing %q", tt.err)
			}
			if !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %q, want it to name %s and contain %q", err, p, tt.err)
			}
		})
	}
	if _, err := OpenNPY(filepath.Join(dir, "missing.npy")); err == nil {
		t.Error("missing file opened")
	}
}
