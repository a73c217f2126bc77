// Package media turns image and audio files into exactly the tensors the
// bundles' vision and audio encoders take (shared/reference/multimodal.md
// §1.2 and §2.2–2.5), and describes each file for a chat chip and a
// checkpoint (Summary, Thumbnail).
//
// Images: LoadImage decodes PNG, JPEG (EXIF orientation applied), GIF (first
// frame), WebP, BMP and TIFF, refusing decompression bombs before decoding;
// Image.Patches stretches it to the side the model declares (VisionGrid),
// premultiplied over black, and lays it out as fp16 [1, grid², 768] patches.
//
// Audio: LoadAudio decodes WAV, FLAC and MP3, averages the channels and
// resamples to 16 kHz with a windowed-sinc filter; Audio.Mel (or MelExtractor)
// computes the fixed [1, 3000, 128] fp16 log-mel and its [1, 3000] mask.
// Clips over 30 s are refused (Audio.CheckLength) or split (Audio.Split),
// never truncated.
//
// Formats only the operating system reads come in through Options.Images
// and Options.Audio; DefaultOptions sets them to the platform's decoders.
// On macOS (with cgo) those are ImageIO for HEIC, HEIF and AVIF and
// AudioToolbox's ExtAudioFile for m4a, aac, caf, aiff and the rest of what
// AVFoundation reads (decode_darwin.go, the package's only cgo); elsewhere
// there are none.
package media
