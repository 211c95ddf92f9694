package callsim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/agentline/agentline/internal/g711"
)

// WAV format codes.
const (
	wavPCM   = 1
	wavMuLaw = 7
)

// ReadWAV reads an 8 kHz mono WAV file, either mu-law or 16-bit PCM, and
// returns its audio as mu-law bytes (PCM is encoded with G.711).
func ReadWAV(r io.Reader) ([]byte, error) {
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil {
		return nil, fmt.Errorf("WAV header: %w", err)
	}
	if string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return nil, errors.New("not a WAV file (no RIFF/WAVE header)")
	}
	var format, channels, bits uint16
	var rate uint32
	haveFmt := false
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, fmt.Errorf("WAV file without a data chunk: %w", err)
		}
		id, size := string(hdr[0:4]), binary.LittleEndian.Uint32(hdr[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1024 {
				return nil, errors.New("WAV fmt chunk of a bad size")
			}
			b := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, err
			}
			format, channels = binary.LittleEndian.Uint16(b[0:2]), binary.LittleEndian.Uint16(b[2:4])
			rate, bits = binary.LittleEndian.Uint32(b[4:8]), binary.LittleEndian.Uint16(b[14:16])
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, errors.New("WAV data before its fmt chunk")
			}
			if channels != 1 || rate != 8000 {
				return nil, fmt.Errorf("the WAV file is %d Hz with %d channels: a phone line carries 8000 Hz mono", rate, channels)
			}
			data, err := io.ReadAll(io.LimitReader(r, int64(size)))
			if err != nil {
				return nil, err
			}
			switch {
			case format == wavMuLaw && bits == 8:
				return data, nil
			case format == wavPCM && bits == 16:
				out := make([]byte, len(data)/2)
				for i := range out {
					out[i] = g711.Encode(int16(binary.LittleEndian.Uint16(data[2*i:])))
				}
				return out, nil
			}
			return nil, fmt.Errorf("WAV format %d with %d bits per sample: use 8-bit mu-law or 16-bit PCM", format, bits)
		default:
			if _, err := io.CopyN(io.Discard, r, int64(size+size%2)); err != nil {
				return nil, err
			}
		}
	}
}

// WriteWAV writes mu-law audio as an 8 kHz mono mu-law WAV file.
func WriteWAV(w io.Writer, mulaw []byte) error {
	n := uint32(len(mulaw))
	h := make([]byte, 0, 58)
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, 50+n+n%2)
	h = append(h, "WAVEfmt "...)
	h = binary.LittleEndian.AppendUint32(h, 18)
	h = binary.LittleEndian.AppendUint16(h, wavMuLaw)
	h = binary.LittleEndian.AppendUint16(h, 1)    // channels
	h = binary.LittleEndian.AppendUint32(h, 8000) // sample rate
	h = binary.LittleEndian.AppendUint32(h, 8000) // bytes per second
	h = binary.LittleEndian.AppendUint16(h, 1)    // block align
	h = binary.LittleEndian.AppendUint16(h, 8)    // bits per sample
	h = binary.LittleEndian.AppendUint16(h, 0)    // no extension
	h = append(h, "fact"...)
	h = binary.LittleEndian.AppendUint32(h, 4)
	h = binary.LittleEndian.AppendUint32(h, n)
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, n)
	if _, err := w.Write(h); err != nil {
		return err
	}
	if _, err := w.Write(mulaw); err != nil {
		return err
	}
	if n%2 == 1 {
		_, err := w.Write([]byte{0})
		return err
	}
	return nil
}
