package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/orchard-llm/orchard/termsafe"
)

// Strings from files (checkpoint metadata, bundle configs, tokenizers,
// model replies) reach the terminal only through termsafe: Main sends
// all of stderr through it, table cells go through termsafe.Line, JSON
// through writeJSON, and data written to stdout (a reply, decoded text)
// is cleaned when stdout is a terminal and left exact when it is a pipe.

// writeJSON prints v as indented JSON with the characters a terminal
// could obey escaped; the values decode unchanged.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(buf.Bytes()))
	return err
}

// terminalSafe returns w cleaned by termsafe when it is a terminal, else
// w itself: a pipe or a file gets the exact bytes.
func terminalSafe(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return termsafe.NewWriter(w)
	}
	return w
}
