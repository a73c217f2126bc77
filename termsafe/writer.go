package termsafe

import "io"

// Writer passes text to a terminal through Text: every control character
// but newline and tab arrives as a visible escape. Each Write is cleaned
// on its own, so a character split across two writes shows as escapes;
// the standard library's formatted writes never split one.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p cleaned; it reports len(p) when the cleaned text was
// written whole.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	c := Text(s)
	if _, err := io.WriteString(w.w, c); err != nil {
		return 0, err
	}
	return len(p), nil
}
