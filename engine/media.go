package engine

import (
	"errors"
	"fmt"

	"github.com/orchard-llm/orchard/media"
)

// Media kinds a user message may carry.
const (
	MediaImage = "image"
	MediaAudio = "audio"
)

// MediaFile asks for a file to be attached to the message being sent: a
// path on this machine, or the file's bytes when they came without one
// (from an API client, or a screen attached from another machine).
type MediaFile struct {
	Kind string // MediaImage or MediaAudio
	Path string
	// Data, when set, is the file's content and Path is not read; Name
	// names it in chips and messages.
	Data []byte
	Name string

	enc *Encoded // encoded already (a request's files, before its turn)
}

// label names the file in messages.
func (f MediaFile) label() string {
	switch {
	case f.Name != "":
		return f.Name
	case f.Path != "":
		return f.Path
	}
	return "the attached " + f.Kind
}

// Attachment is a file attached to a user message: what the chat shows as
// a chip, what a checkpoint keeps (the file's identity, not its rows: the
// cache holds those), and the soft-token spans it occupies in the prompt.
type Attachment struct {
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Path      string  `json:"path,omitempty"` // as attached; it may be gone later
	SHA256    string  `json:"sha256"`
	Bytes     int64   `json:"bytes"`
	Format    string  `json:"format,omitempty"`
	Width     int     `json:"width,omitempty"`   // images, upright
	Height    int     `json:"height,omitempty"`  // images, upright
	Seconds   float64 `json:"seconds,omitempty"` // audio
	Spans     []int   `json:"spans"`             // soft rows of each span (a clip over 30 s has several)
	Thumbnail []byte  `json:"thumbnail,omitempty"`
}

// Tokens is the attachment's soft tokens in all.
func (a Attachment) Tokens() int {
	n := 0
	for _, s := range a.Spans {
		n += s
	}
	return n
}

// TranscriptionInstruction is the published app's text for a clip sent
// without words (multimodal doc §3.4).
const TranscriptionInstruction = "Transcribe the following speech segment in English into English text.\n\nFollow these specific instructions for formatting the answer:\n* Only output the transcription, with no newlines.\n* When transcribing numbers, write the digits, i.e. write 1.7 and not one point seven, and write 3 instead of three."

// ErrNoEncoder is wrapped when a bundle cannot take a kind of media.
var ErrNoEncoder = errors.New("this bundle has no encoder for it")

// FileError is a media file refused for what it holds (its format, its
// size, its length): the user's to fix, unlike an encoder that fails.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

func fileError(path string, err error) error {
	if err == nil {
		return nil
	}
	var le *media.LimitError
	if errors.As(err, &le) {
		if key := limitSetting(le.Option); key != "" {
			err = fmt.Errorf("%w; the %s setting raises the limit", err, key)
		}
	}
	return &FileError{Path: path, Err: err}
}

// limitSetting is the config key of a media limit (MediaLimits), by the
// media.Options field it sets; "" for one no setting raises.
func limitSetting(option string) string {
	switch option {
	case "MaxBytes":
		return "media.max_file_size"
	case "MaxPixels":
		return "media.max_megapixels"
	case "MaxDecodeBytes":
		return "media.max_decode_size"
	case "MaxSeconds":
		return "media.max_audio_seconds"
	}
	return ""
}
