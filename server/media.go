package server

import (
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
	minBodyBytes         = 32 << 20 // text, when the tokenizer gives no bound
)

// maxMedia is the largest file a request may carry.
func (s *Server) maxMedia() int64 {
	if s.o.MaxMediaBytes > 0 {
		return s.o.MaxMediaBytes
	}
	return DefaultMaxMediaBytes
}

// mediaRules is what decides whether a request's files can be taken: the
// kinds the bundle has encoders for, its family and folder (named in a
// refusal) and the size limit.
type mediaRules struct {
	kinds       []string
	family, dir string
	limit       int64
}

func (s *Server) mediaRules() mediaRules {
	return mediaRules{kinds: s.info.Media, family: s.info.Family, dir: s.o.BundleDir, limit: s.maxMedia()}
}

// file checks a file of a kind from a request part (param names it) and
// returns it for the engine, named by param.
func (mr mediaRules) file(kind, param string, data []byte) (engine.MediaFile, error) {
	if !slices.Contains(mr.kinds, kind) {
		return engine.MediaFile{}, bad("unsupported_content", param, engine.NoEncoder(kind, mr.family, mr.dir).Error())
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

// inline takes a file of a kind decoded from a request's JSON.
func (mr mediaRules) inline(kind, param string, f *inlineFile) (engine.MediaFile, error) {
	if !slices.Contains(mr.kinds, kind) {
		return engine.MediaFile{}, bad("unsupported_content", param, engine.NoEncoder(kind, mr.family, mr.dir).Error())
	}
	if f.err != nil {
		return engine.MediaFile{}, bad("invalid_value", param, fmt.Sprintf("%s: %v", param, f.err))
	}
	return mr.file(kind, param, f.data)
}

// imageURL reads an image_url part: a data URL with the picture in base64.
// A URL to fetch is refused: the server never reaches the network.
func (mr mediaRules) imageURL(param string, f *inlineFile) (engine.MediaFile, error) {
	lower := strings.ToLower(f.url)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return engine.MediaFile{}, bad("unsupported_value", param+".image_url.url",
			"orchard serve does not fetch images from the network: send the picture inline as a data URL (data:image/png;base64,...)")
	case !f.dataURL && f.err == nil:
		return engine.MediaFile{}, bad("invalid_image_url", param+".image_url.url",
			"the image URL must be a data URL (data:image/png;base64,...); orchard serve reads no other kind")
	}
	if err := checkDataURL(f, "image/"); err != nil {
		return engine.MediaFile{}, bad("invalid_image_url", param+".image_url.url", fmt.Sprintf("%s: %v", param, err))
	}
	return mr.inline(engine.MediaImage, param, f)
}

// inputAudio reads an input_audio part's data: base64 (or a data URL of
// an audio type). The format field is not needed: the decoders read the
// bytes' own header.
func (mr mediaRules) inputAudio(param string, f *inlineFile) (engine.MediaFile, error) {
	if err := checkDataURL(f, "audio/"); err != nil {
		return engine.MediaFile{}, bad("invalid_value", param+".input_audio.data", fmt.Sprintf("%s: %v", param, err))
	}
	return mr.inline(engine.MediaAudio, param, f)
}

// checkDataURL checks a data URL's metadata: base64, of a media type that
// begins with want ("image/"); an absent type is taken as such. A file
// that is no data URL passes.
func checkDataURL(f *inlineFile, want string) error {
	if !f.dataURL {
		return nil
	}
	if f.meta == "" && f.err != nil {
		return f.err // no comma
	}
	if !isBase64Meta(f.meta) {
		return fmt.Errorf("the data URL is not base64: want data:%s...;base64,...", want)
	}
	params := strings.Split(f.meta, ";")
	if mt := strings.ToLower(strings.TrimSpace(params[0])); mt != "" && mt != "base64" && !strings.HasPrefix(mt, want) && mt != "application/octet-stream" {
		return fmt.Errorf("the data URL holds %s, not %s*", mt, want)
	}
	return nil
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
