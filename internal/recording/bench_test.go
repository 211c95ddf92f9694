package recording

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// The relay's side of recording: what one Caller or Agent call costs the
// goroutine that carries the call's audio. In the benchmarks below the
// writer runs meanwhile and falls behind the loop (which calls far faster
// than 50 frames a second), so most calls take the cheap drop path;
// drops/op says how many. BenchmarkAccepted measures the other path, where
// every payload is copied.

// BenchmarkAccepted: every call copies its payload. The writer is held and
// the loop empties the buffer itself every 128 calls (the swap the writer
// does), so the figure is the relay's copy without the writer's decoding.
func BenchmarkAccepted(b *testing.B) {
	hook, release := stuckWriter()
	defer release()
	rec := newTestRecorder(b, Options{batchHook: hook})
	frame := b64(tone(1, 160))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	var i int64
	for b.Loop() {
		if i%2 == 0 {
			rec.Caller(frame, i%40*20)
		} else {
			rec.Agent(frame)
		}
		if i++; i%128 == 0 {
			rec.take()
		}
	}
	b.StopTimer()
	if rec.counts.callerFrames+rec.counts.agentBytes != 0 {
		b.Fatalf("dropped: %+v", rec.counts)
	}
	release()
	res := closeRecorder(b, rec)
	res.Remove()
}

func BenchmarkCaller(b *testing.B) {
	rec := newTestRecorder(b, Options{})
	frame := b64(tone(1, 160)) // 20 ms, 216 base64 bytes as the carrier sends it
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	var i int64
	for b.Loop() {
		// Timestamps cycle within the writer's window, so that the file
		// does not grow with b.N.
		rec.Caller(frame, i%40*20)
		i++
	}
	b.StopTimer()
	res := closeRecorder(b, rec)
	res.Remove()
	b.ReportMetric(float64(res.DroppedCallerFrames)/float64(i), "drops/op")
}

func BenchmarkAgent(b *testing.B) {
	rec := newTestRecorder(b, Options{})
	delta := b64(tone(2, 160))
	b.ReportAllocs()
	b.SetBytes(int64(len(delta)))
	var i int64
	for b.Loop() {
		rec.Agent(delta)
		if i++; i%64 == 0 {
			rec.Clear() // the line time stands still: drop the queue, bound memory
		}
	}
	b.StopTimer()
	res := closeRecorder(b, rec)
	res.Remove()
	b.ReportMetric(float64(res.DroppedAgentBytes)/160/float64(i), "drops/op")
}

// BenchmarkBothSides has the two relay goroutines record at once, as in a
// call: they share the Recorder's lock.
func BenchmarkBothSides(b *testing.B) {
	rec := newTestRecorder(b, Options{})
	frame := b64(tone(1, 160))
	b.ReportAllocs()
	b.SetParallelism(1)
	b.RunParallel(func(pb *testing.PB) {
		var i int64
		for pb.Next() {
			if i%2 == 0 {
				rec.Caller(frame, i%40*20)
			} else {
				rec.Agent(frame)
			}
			if i++; i%128 == 0 {
				rec.Clear()
			}
		}
	})
	b.StopTimer()
	if _, err := rec.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCallSecond: all the CPU a recording costs per second of call,
// with both sides talking the whole time. Each op records a 60 s call
// (50 caller frames and 50 agent deltas of 20 ms a second) into a new file
// and closes it: the relay's copies, the writer's decoding and writing,
// the file's creation and header, the buffers' allocation. Each second is
// handed over once the writer has taken the one before, as at a real
// call's pace, so nothing is dropped. ns/call-s is the cost of one second.
func BenchmarkCallSecond(b *testing.B) {
	const seconds = 60
	dir := b.TempDir()
	frame := b64(tone(1, 160))
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		rec := newTestRecorder(b, Options{Dir: dir})
		for s := range int64(seconds) {
			for k := range int64(50) {
				rec.Caller(frame, s*1000+k*20)
				rec.Agent(frame)
			}
			for rec.pending() > 0 {
				time.Sleep(100 * time.Microsecond) // not a spin: the CPU figure is the process's
			}
		}
		res := closeRecorder(b, rec)
		if res.Gaps != 0 || res.CallerFrames != seconds*50 {
			b.Fatalf("recorded %d caller frames with %d gaps", res.CallerFrames, res.Gaps)
		}
		res.Remove()
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/seconds, "cpu-ns/call-s")
}

// processCPU is the user and system CPU time this process has used: on a
// shared machine, wall time per op would count the waits for a CPU.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pending is how many events wait for the writer to take them.
func (r *Recorder) pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cur.events)
}
