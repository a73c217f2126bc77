package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/regfile"
)

// Pictures and clips sent to the server: OpenAI's image_url (data URLs)
// and input_audio parts, ollama's images, and the files an attached screen
// sends with a chat message. They arrive as bytes and reach the engine as
// bytes (engine.MediaFile.Data): nothing is written to disk, and nothing
// is fetched from the network.

// Limits when Options leaves them zero.
const (
	DefaultMaxMediaBytes = 32 << 20 // one picture or clip, decoded
	minBodyBytes         = 32 << 20 // a long text conversation
)

// maxMedia is the largest file a request may carry.
func (s *Server) maxMedia() int64 {
	if s.o.MaxMediaBytes > 0 {
		return s.o.MaxMediaBytes
	}
	return DefaultMaxMediaBytes
}

// maxBody bounds a request body: room for a few files of the largest size
// in base64, and for a long conversation.
func (s *Server) maxBody() int64 {
	return max(minBodyBytes, 4*s.maxMedia())
}

// mediaRules is what decides whether a request's files can be taken: the
// kinds the bundle has encoders for, its folder (named in a refusal) and
// the size limit.
type mediaRules struct {
	kinds []string
	dir   string
	limit int64
}

func (s *Server) mediaRules() mediaRules {
	return mediaRules{kinds: s.info.Media, dir: s.o.BundleDir, limit: s.maxMedia()}
}

// file checks a file of a kind from a request part (param names it) and
// returns it for the engine, named by param.
func (mr mediaRules) file(kind, param string, data []byte) (engine.MediaFile, error) {
	if !slices.Contains(mr.kinds, kind) {
		return engine.MediaFile{}, bad("unsupported_content", param, engine.NoEncoder(kind, mr.dir).Error())
	}
	if len(data) == 0 {
		return engine.MediaFile{}, bad("invalid_value", param, "the "+kind+" is empty")
	}
	if int64(len(data)) > mr.limit {
		return engine.MediaFile{}, tooLarge(param, int64(len(data)), mr.limit)
	}
	return engine.MediaFile{Kind: kind, Name: param, Data: data}, nil
}

// tooLarge refuses a file over the limit: 413, naming the limit.
func tooLarge(param string, n, limit int64) error {
	return &badRequest{status: http.StatusRequestEntityTooLarge, code: "file_too_large", param: param,
		msg: fmt.Sprintf("%s is %s, over the %s orchard serve takes for one file", param, regfile.Size(n), regfile.Size(limit))}
}

// decodedLen bounds the bytes a base64 text decodes to, so a file over the
// limit is refused before it is decoded.
func decodedLen(b64 string) int64 { return int64(len(b64)) / 4 * 3 }

// decodeBase64 reads standard base64, with or without padding; line
// breaks are ignored.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if data, err := base64.StdEncoding.DecodeString(s); err == nil {
		return data, nil
	}
	data, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("its base64 is malformed (%v)", err)
	}
	return data, nil
}

// base64File decodes a part's base64 payload as a file of a kind.
func (mr mediaRules) base64File(kind, param, b64 string) (engine.MediaFile, error) {
	if !slices.Contains(mr.kinds, kind) {
		return engine.MediaFile{}, bad("unsupported_content", param, engine.NoEncoder(kind, mr.dir).Error())
	}
	if n := decodedLen(strings.TrimSpace(b64)); n > mr.limit+3 {
		return engine.MediaFile{}, tooLarge(param, n, mr.limit)
	}
	data, err := decodeBase64(b64)
	if err != nil {
		return engine.MediaFile{}, bad("invalid_value", param, fmt.Sprintf("%s: %v", param, err))
	}
	return mr.file(kind, param, data)
}

// imageURL reads an image_url part: a data URL with the picture in base64.
// A URL to fetch is refused: the server never reaches the network.
func (mr mediaRules) imageURL(param, url string) (engine.MediaFile, error) {
	lower := strings.ToLower(strings.TrimSpace(url))
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return engine.MediaFile{}, bad("unsupported_value", param+".image_url.url",
			"orchard serve does not fetch images from the network: send the picture inline as a data URL (data:image/png;base64,...)")
	case !strings.HasPrefix(lower, "data:"):
		return engine.MediaFile{}, bad("invalid_image_url", param+".image_url.url",
			"the image URL must be a data URL (data:image/png;base64,...); orchard serve reads no other kind")
	}
	payload, err := dataURL(strings.TrimSpace(url), "image/")
	if err != nil {
		return engine.MediaFile{}, bad("invalid_image_url", param+".image_url.url", fmt.Sprintf("%s: %v", param, err))
	}
	return mr.base64File(engine.MediaImage, param, payload)
}

// inputAudio reads an input_audio part's data: base64 (or a data URL of
// an audio type). The format field is not needed: the decoders read the
// bytes' own header.
func (mr mediaRules) inputAudio(param, data string) (engine.MediaFile, error) {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(data)), "data:") {
		payload, err := dataURL(strings.TrimSpace(data), "audio/")
		if err != nil {
			return engine.MediaFile{}, bad("invalid_value", param+".input_audio.data", fmt.Sprintf("%s: %v", param, err))
		}
		data = payload
	}
	return mr.base64File(engine.MediaAudio, param, data)
}

// dataURL returns the base64 payload of a data URL whose media type
// begins with want ("image/"); an absent type is taken as such.
func dataURL(url, want string) (string, error) {
	meta, payload, ok := strings.Cut(url[len("data:"):], ",")
	if !ok {
		return "", fmt.Errorf("the data URL has no comma before its data")
	}
	params := strings.Split(meta, ";")
	if !strings.EqualFold(strings.TrimSpace(params[len(params)-1]), "base64") {
		return "", fmt.Errorf("the data URL is not base64: want data:%s...;base64,...", want)
	}
	if mt := strings.ToLower(strings.TrimSpace(params[0])); mt != "" && mt != "base64" && !strings.HasPrefix(mt, want) && mt != "application/octet-stream" {
		return "", fmt.Errorf("the data URL holds %s, not %s*", mt, want)
	}
	return payload, nil
}

// wireMedia is a file an attached screen sends with a chat message.
type wireMedia struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Data []byte `json:"data"` // base64 in JSON
}

// chatFiles checks an attached screen's files.
func (mr mediaRules) chatFiles(in []wireMedia) ([]engine.MediaFile, error) {
	var out []engine.MediaFile
	for j, m := range in {
		param := fmt.Sprintf("media[%d]", j)
		if m.Kind != engine.MediaImage && m.Kind != engine.MediaAudio {
			return nil, bad("invalid_value", param+".kind", fmt.Sprintf("kind %q: want image or audio", m.Kind))
		}
		f, err := mr.file(m.Kind, param, m.Data)
		if err != nil {
			return nil, err
		}
		if name := filepath.Base(strings.ReplaceAll(m.Name, `\`, "/")); m.Name != "" && name != "." && name != "/" {
			if len(name) > 255 {
				name = strings.ToValidUTF8(name[:255], "")
			}
			f.Name = name
		}
		out = append(out, f)
	}
	return out, nil
}

// wireInfo describes the model to attached screens, with the largest file
// a message may carry.
func (s *Server) wireInfo() *wireInfo {
	w := toWireInfo(s.info)
	w.MaxFileBytes = s.maxMedia()
	return w
}
