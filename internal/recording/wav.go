package recording

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The file is 16-bit linear PCM rather than mu-law WAV (format 7): every
// player reads it, and each sample is exactly g711.Decode of the line's
// byte, so nothing is lost but disk space (twice the mu-law size).
const (
	wavHeaderLen = 44
	wavChannels  = 2
	wavBits      = 16
	// maxFrames keeps the RIFF sizes within 32 bits (about 37 hours).
	maxFrames = (1<<32 - 1 - (wavHeaderLen - 8)) / (wavChannels * wavBits / 8)
)

// wavHeader is the canonical 44-byte header for frames stereo frames.
func wavHeader(frames int64) []byte {
	data := uint32(frames * wavChannels * wavBits / 8)
	h := make([]byte, 0, wavHeaderLen)
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, wavHeaderLen-8+data)
	h = append(h, "WAVEfmt "...)
	h = binary.LittleEndian.AppendUint32(h, 16)
	h = binary.LittleEndian.AppendUint16(h, 1) // PCM
	h = binary.LittleEndian.AppendUint16(h, wavChannels)
	h = binary.LittleEndian.AppendUint32(h, SampleRate)
	h = binary.LittleEndian.AppendUint32(h, SampleRate*wavChannels*wavBits/8)
	h = binary.LittleEndian.AppendUint16(h, wavChannels*wavBits/8)
	h = binary.LittleEndian.AppendUint16(h, wavBits)
	h = append(h, "data"...)
	return binary.LittleEndian.AppendUint32(h, data)
}

// patchHeader rewrites the header once the length is known: the file is
// written as the call goes, so the sizes are unknown at the start.
func patchHeader(w io.WriterAt, frames int64) error {
	if _, err := w.WriteAt(wavHeader(frames), 0); err != nil {
		return fmt.Errorf("finish recording header: %w", err)
	}
	return nil
}
