package recording

import (
	"context"
	"encoding/binary"
	"os"
	"testing"
	"time"
)

// FuzzRecorder feeds random calls: frames of any length at any timestamp
// (negative, repeated, backwards, past MaxDuration), payloads that are not
// base64, agent audio and clears in any order, with a buffer small enough
// to drop. The recorder must not panic and the file must be a well-formed
// WAV of the reported length.
func FuzzRecorder(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 160, 1, 0, 0, 0, 200, 2, 0, 0, 40, 160})
	f.Add([]byte{0, 0, 0x27, 0x10, 50, 0x10, 0, 0, 0, 9, 2, 2, 1, 0, 0, 30})
	f.Add([]byte{1, 0, 0, 0, 255, 1, 0, 0, 0, 255, 0, 0, 0xff, 0xff, 10, 2})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{Dir: dir, MaxDuration: 10 * time.Second, BufferBytes: 1024}
		rec, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		feed(rec, data)
		res, err := rec.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(res.Path)
		res.Remove()
		if err != nil {
			t.Fatal(err)
		}
		w, err := parseWAV(b)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != res.Bytes || time.Duration(len(w.left))*time.Second/SampleRate != res.Duration || res.Duration > opts.MaxDuration {
			t.Fatalf("file %d bytes, %d samples; Result %d bytes, %v", len(b), len(w.left), res.Bytes, res.Duration)
		}
	})
}

// feed turns bytes into relay calls. Each op: kind byte, then for audio a
// 16-bit timestamp (offset so that some are negative) and a length; bit
// 0x10 of the kind byte sends the bytes raw instead of as base64.
func feed(rec *Recorder, data []byte) {
	for len(data) >= 4 {
		op, ts, n := data[0], int64(binary.BigEndian.Uint16(data[1:]))-1000, int(data[3])
		data = data[4:]
		audio := data[:min(n, len(data))]
		data = data[len(audio):]
		p := b64(audio)
		if op&0x10 != 0 {
			p = append([]byte(nil), audio...)
		}
		switch op % 3 {
		case 0:
			rec.Caller(p, ts)
		case 1:
			rec.Agent(p)
		case 2:
			rec.Clear()
		}
	}
}
