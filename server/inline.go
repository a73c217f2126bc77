package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Files sent inline in a request's JSON — a data URL or bare base64 —
// are decoded as the JSON is read, straight from the request body's
// bytes: the base64 text is never copied into a string first. A request
// then holds its body and its decoded files, nothing more (it held five
// copies of a picture before: 274 MiB allocated for one 30 MiB file).

// inlineFile is one such file: what stood before its payload (a data
// URL's media type, or the start of another URL) and the decoded bytes.
type inlineFile struct {
	set     bool   // the field was there
	dataURL bool   // a data: URL
	meta    string // a data URL's metadata (between "data:" and the comma)
	url     string // the start of a URL that is not a data URL (for messages)
	data    []byte // the decoded payload
	err     error  // what is wrong with it (reported with the part's name)
}

// maxMeta bounds the text kept from before a payload.
const maxMeta = 256

// parse reads a JSON string holding a data URL, or (bare) base64 when
// bare is set; a URL of another kind is kept for the refusal.
func (f *inlineFile) parse(raw []byte, bare bool) {
	*f = inlineFile{set: true}
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		f.err = errors.New("it must be a string")
		return
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		// Escapes ("\/", "\n"): unquote, the one case that copies.
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			f.err = err
			return
		}
		s = []byte(str)
	}
	s = bytes.TrimSpace(s)
	switch {
	case hasPrefixFold(s, "data:"):
		f.dataURL = true
		meta, payload, ok := bytes.Cut(s[len("data:"):], []byte(","))
		if !ok {
			f.err = errors.New("the data URL has no comma before its data")
			return
		}
		if len(meta) > maxMeta {
			f.err = fmt.Errorf("the data URL's media type is %d bytes long", len(meta))
			return
		}
		f.meta = string(meta)
		if !isBase64Meta(f.meta) {
			return // refused by the caller, which names what it wants
		}
		f.data, f.err = decodeBase64Bytes(payload)
	case !bare:
		f.url = string(s[:min(len(s), maxMeta)])
	default:
		f.data, f.err = decodeBase64Bytes(s)
	}
}

func hasPrefixFold(s []byte, prefix string) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], []byte(prefix))
}

// isBase64Meta reports whether a data URL's metadata ends in ";base64".
func isBase64Meta(meta string) bool {
	params := bytes.Split([]byte(meta), []byte(";"))
	return bytes.EqualFold(bytes.TrimSpace(params[len(params)-1]), []byte("base64"))
}

// decodeBase64Bytes reads standard base64, with or without padding; line
// breaks are ignored.
func decodeBase64Bytes(b []byte) ([]byte, error) {
	dst := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(dst, b)
	if err != nil {
		n, err = base64.RawStdEncoding.Decode(dst, bytes.TrimRight(b, "=\r\n"))
	}
	if err != nil {
		return nil, fmt.Errorf("its base64 is malformed (%v)", err)
	}
	return dst[:n], nil
}

// dataURLField is a JSON string that must be a data URL (image_url.url).
type dataURLField struct{ inlineFile }

func (f *dataURLField) UnmarshalJSON(raw []byte) error {
	f.parse(raw, false)
	return nil
}

// base64Field is a JSON string of base64 or a data URL (input_audio.data,
// ollama's images).
type base64Field struct{ inlineFile }

func (f *base64Field) UnmarshalJSON(raw []byte) error {
	f.parse(raw, true)
	return nil
}

// imageURLField is an image_url part's image_url: {"url": ...}, as OpenAI
// sends it, or the URL alone, as some clients do.
type imageURLField struct{ dataURLField }

func (f *imageURLField) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			URL dataURLField `json:"url"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			f.inlineFile = inlineFile{set: true, err: err}
			return nil
		}
		f.dataURLField = obj.URL
		return nil
	}
	if string(raw) == "null" {
		return nil
	}
	return f.dataURLField.UnmarshalJSON(raw)
}

// contentJSON is a message's content: a string, or an array of parts
// (read in place, without a copy of the raw JSON).
type contentJSON struct {
	text  string
	parts []contentPart
	array bool
	err   error
}

func (c *contentJSON) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
	case len(raw) > 0 && raw[0] == '"':
		c.err = json.Unmarshal(raw, &c.text)
	case len(raw) > 0 && raw[0] == '[':
		c.array = true
		if json.Unmarshal(raw, &c.parts) != nil {
			c.err = errors.New("content must be a string or an array of content parts")
		}
	default:
		c.err = errors.New("content must be a string or an array of content parts")
	}
	return nil
}
