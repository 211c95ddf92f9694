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

// processCPU is the user and system CPU time this process has used: on a
// shared machine, wall time per op would count the waits for a CPU.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPacedCalls: recording's CPU per second of call at a real call's
// pace, which BenchmarkCallSecond's bulk feeding leaves out: 200 calls, each
// handed a caller frame and an agent delta every 20 ms for 5 s, as the
// relay does, so the writers' wake-ups count too. The feeding loop's own
// cost (a ticker, 200 x 2 calls per tick) is in the figure.
func BenchmarkPacedCalls(b *testing.B) {
	const calls, seconds = 200, 5
	dir := b.TempDir()
	frame := b64(tone(1, 160))
	for b.Loop() {
		recs := make([]*Recorder, calls)
		for i := range recs {
			recs[i] = newTestRecorder(b, Options{Dir: dir})
		}
		cpu0 := processCPU()
		tick := time.NewTicker(20 * time.Millisecond)
		for k := range int64(seconds * 50) {
			<-tick.C
			for _, rec := range recs {
				rec.Caller(frame, k*20)
				rec.Agent(frame)
			}
		}
		tick.Stop()
		for _, rec := range recs {
			res := closeRecorder(b, rec)
			if res.Gaps != 0 {
				b.Fatalf("%d gaps", res.Gaps)
			}
			res.Remove()
		}
		b.ReportMetric(float64(processCPU()-cpu0)/calls/seconds, "cpu-ns/call-s")
	}
}
