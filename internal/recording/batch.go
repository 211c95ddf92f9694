package recording

import "bytes"

type kind uint8

const (
	kindCaller kind = iota + 1 // caller frame at a line position
	kindAgent                  // agent audio, arrived at a line time
	kindGap                    // agent audio the writer never got: silence that keeps its place
	kindClear                  // barge-in at a line time
)

// event is one call of the relay, with its payload kept in batch.data.
type event struct {
	kind     kind
	at       int64 // samples: caller, the frame's position; others, the line time at the call
	n        int64 // samples the payload stands for (from its base64 length)
	off, end int   // payload in batch.data
}

// batch is one half of the double buffer between the relay and the writer.
// Both halves are allocated once; the relay appends to one while the writer
// reads the other, and they swap under the Recorder's lock.
type batch struct {
	events []event
	data   []byte
}

func newBatch(dataBytes, events int) *batch {
	return &batch{events: make([]event, 0, events), data: make([]byte, 0, dataBytes)}
}

func (b *batch) reset() {
	b.events = b.events[:0]
	b.data = b.data[:0]
}

// add appends ev with a copy of payload; false when either is full, never
// growing the buffers.
func (b *batch) add(ev event, payload []byte) bool {
	if len(b.events) == cap(b.events) || len(payload) > cap(b.data)-len(b.data) {
		return false
	}
	ev.off = len(b.data)
	b.data = append(b.data, payload...)
	ev.end = len(b.data)
	b.events = append(b.events, ev)
	return true
}

// extendGap lengthens a gap that is the last event, so that a run of
// dropped agent audio takes one event.
func (b *batch) extendGap(n int64) bool {
	if !b.lastIs(kindGap) {
		return false
	}
	b.events[len(b.events)-1].n += n
	return true
}

// halfFull says the writer should take the batch now rather than at its
// next tick, so that the relay never finds it full.
func (b *batch) halfFull() bool {
	return 2*len(b.events) >= cap(b.events) || 2*len(b.data) >= cap(b.data)
}

func (b *batch) lastIs(k kind) bool {
	return len(b.events) > 0 && b.events[len(b.events)-1].kind == k
}

func (b *batch) payload(ev event) []byte { return b.data[ev.off:ev.end] }

// decodedLen is how many bytes (samples) standard base64 holds, without
// decoding it: the relay side needs the length for its clock, and decoding
// belongs to the writer. Backslashes (JSON escapes of '/') are not counted.
func decodedLen(b64 []byte) int64 {
	n := len(b64)
	pad := 0
	for i := n - 1; i >= 0 && i >= n-2 && b64[i] == '='; i-- {
		pad++
	}
	if bytes.IndexByte(b64, '\\') >= 0 {
		n -= bytes.Count(b64, []byte{'\\'})
	}
	return int64(max(0, n/4*3+(n%4)*3/4-pad))
}
