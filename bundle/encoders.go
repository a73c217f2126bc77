package bundle

import "path/filepath"

// Encoder folder names of the okayuji bundles, next to manifest.json
// (multimodal doc §4): still images, the smaller Live Camera vision model,
// and speech (E2B only).
const (
	VisionEncoder    = "vision_fp16"
	VisionEncoderB70 = "vision_fp16_b70"
	AudioEncoder     = "audio_fp16"
)

// findEncoders records the encoder models present (.mlmodelc, or an
// .mlpackage to compile). They are optional: a bundle without one simply
// cannot take that kind of input.
func (b *Bundle) findEncoders() {
	for _, name := range []string{VisionEncoder, VisionEncoderB70, AudioEncoder} {
		for _, ext := range []string{".mlmodelc", ".mlpackage"} {
			if p := filepath.Join(b.Dir, name+ext); exists(p) {
				b.Encoders = append(b.Encoders, Chunk{Name: name, Path: p})
				break
			}
		}
	}
}

// Encoder returns the named encoder model, if the bundle has it.
func (b *Bundle) Encoder(name string) (Chunk, bool) {
	for _, e := range b.Encoders {
		if e.Name == name {
			return e, true
		}
	}
	return Chunk{}, false
}
