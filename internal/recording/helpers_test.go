package recording

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// wavFile is a parsed recording.
type wavFile struct {
	left, right []int16
}

// parseWAV checks that b is the canonical 44-byte-header stereo 8 kHz
// 16-bit PCM WAV whose sizes match its length, and splits the channels.
func parseWAV(b []byte) (wavFile, error) {
	if len(b) < wavHeaderLen {
		return wavFile{}, fmt.Errorf("%d bytes: shorter than a header", len(b))
	}
	le := binary.LittleEndian
	data := le.Uint32(b[40:])
	switch {
	case string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data":
		return wavFile{}, errors.New("not a canonical WAV header")
	case le.Uint32(b[4:]) != uint32(len(b)-8):
		return wavFile{}, fmt.Errorf("RIFF size %d, file %d", le.Uint32(b[4:]), len(b))
	case le.Uint32(b[16:]) != 16 || le.Uint16(b[20:]) != 1:
		return wavFile{}, errors.New("not PCM")
	case le.Uint16(b[22:]) != 2 || le.Uint32(b[24:]) != 8000 || le.Uint16(b[34:]) != 16:
		return wavFile{}, fmt.Errorf("channels %d rate %d bits %d", le.Uint16(b[22:]), le.Uint32(b[24:]), le.Uint16(b[34:]))
	case le.Uint32(b[28:]) != 32000 || le.Uint16(b[32:]) != 4:
		return wavFile{}, errors.New("byte rate or block align wrong")
	case int(data) != len(b)-wavHeaderLen || data%4 != 0:
		return wavFile{}, fmt.Errorf("data size %d, file %d", data, len(b))
	}
	var w wavFile
	for p := b[wavHeaderLen:]; len(p) >= 4; p = p[4:] {
		w.left = append(w.left, int16(le.Uint16(p)))
		w.right = append(w.right, int16(le.Uint16(p[2:])))
	}
	return w, nil
}

// readResult parses the recording of res and removes the file.
func readResult(t testing.TB, res Result) wavFile {
	t.Helper()
	b, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Remove(); err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != res.Bytes {
		t.Fatalf("Result.Bytes %d, file %d", res.Bytes, len(b))
	}
	w, err := parseWAV(b)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// tone returns n mu-law bytes that never decode to 0 (not 0xFF or 0x7F),
// so that any of them in the recording is told apart from silence.
func tone(seed, n int) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
		if b[i] == 0xFF || b[i] == 0x7F {
			b[i] = 0x80
		}
	}
	return b
}

func b64(mu []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(mu))
}

func newTestRecorder(t testing.TB, opts Options) *Recorder {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Now == nil {
		// A stopped wall clock: the scenarios' line time is their frames'
		// timestamps alone, however slowly the test runs.
		t0 := time.Now()
		opts.Now = func() time.Time { return t0 }
	}
	rec, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func closeRecorder(t testing.TB, rec *Recorder) Result {
	t.Helper()
	res, err := rec.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// firstDiff reports the first sample where got and want differ.
func firstDiff(got, want []int16) string {
	for i := range max(len(got), len(want)) {
		var g, w int16
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("sample %d (%d ms): got %d, want %d (lengths %d, %d)", i, i/8, g, w, len(got), len(want))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("lengths %d, %d", len(got), len(want))
	}
	return ""
}
