// Package relayload is the phone load harness the benchmarks share: the
// carrier's side of a call at a phone line's pace (a Twilio media stream
// sending a 20 ms mu-law frame every 20 ms, each carrying its send time,
// and timing the echoes that come back), the copy-only pass-through relay
// that is the floor every relay is measured against, the child process a
// server under load runs in, and the process figures read from /proc. The
// relay's own load run (package relay's tests) and the whole server's call
// cost run (cmd/agentline's tests) both use it, so their floors and their
// framing are one code. Nothing in production imports it.
package relayload

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Stream is where one simulated call's media stream goes and what its
// start message says.
type Stream struct {
	// URL is the WebSocket URL dialed (ws://127.0.0.1:port/...).
	URL string
	// Header is sent with the upgrade (the carrier's signature).
	Header http.Header
	// N numbers the call: its stream and call SIDs, when not given.
	N int
	// CallSID and StreamSID, when empty, are made from N.
	CallSID, StreamSID string
	// Params are the start message's customParameters (the TwiML's
	// <Parameter>s).
	Params map[string]string
	// Untimed counts the echoes received in the measured window without
	// timing them: they come back changed (resampled, as on Gemini
	// calls), so their send time cannot be read from them.
	Untimed bool
}

// Stats is what one call measured: frames sent and echoed back between
// its measureFrom and stopAt, and each echo's round trip.
type Stats struct {
	Sent, Got int
	Lat       []time.Duration
	Failed    bool
}

// Call is one caller: connected and start, then 20 ms frames at a phone
// line's pace until stopAt, each carrying its send time in its first 8
// bytes, and a reader that times each echoed frame. Only frames sent
// between measureFrom and stopAt count. It ends as Twilio does when the
// caller hangs up: after the last echoes, a stop message.
func Call(ctx context.Context, s Stream, measureFrom, stopAt time.Time, st *Stats) error {
	conn, _, err := websocket.Dial(ctx, s.URL, &websocket.DialOptions{HTTPHeader: s.Header})
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	if s.CallSID == "" {
		s.CallSID = fmt.Sprintf("CA%032d", s.N)
	}
	if s.StreamSID == "" {
		s.StreamSID = fmt.Sprintf("MZ%032d", s.N)
	}
	sid := s.StreamSID
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"event":"connected","protocol":"Call","version":"1.0.0"}`)); err != nil {
		return err
	}
	params, _ := json.Marshal(s.Params)
	if s.Params == nil {
		params = []byte("{}")
	}
	start := fmt.Sprintf(`{"event":"start","sequenceNumber":"1","streamSid":"%s","start":{"streamSid":"%s","accountSid":"AC1","callSid":"%s","tracks":["inbound"],"customParameters":%s,"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}`, sid, sid, s.CallSID, params)
	if err := conn.Write(ctx, websocket.MessageText, []byte(start)); err != nil {
		return err
	}
	readErr := make(chan error, 1)
	go readEchoes(ctx, conn, s.Untimed, measureFrom, stopAt, st, readErr)
	frame := make([]byte, 160)
	for i := range frame {
		frame[i] = byte(i * 7)
	}
	msg := make([]byte, 0, 400)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	seq := 2
	for ; ; seq++ {
		select {
		case <-tick.C:
		case err := <-readErr:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
		now := time.Now()
		if now.After(stopAt) {
			break
		}
		binary.BigEndian.PutUint64(frame, uint64(now.UnixNano()))
		msg = fmt.Appendf(msg[:0], `{"event":"media","sequenceNumber":"%d","streamSid":"%s","media":{"track":"inbound","chunk":"%d","timestamp":"%d","payload":"`, seq, sid, seq-1, (seq-2)*20)
		msg = base64.StdEncoding.AppendEncode(msg, frame)
		msg = append(msg, `"}}`...)
		if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
			return err
		}
		if now.After(measureFrom) {
			st.Sent++
		}
	}
	// Let the last echoes come back, then hang up like Twilio does.
	time.Sleep(300 * time.Millisecond)
	stop := fmt.Sprintf(`{"event":"stop","sequenceNumber":"%d","streamSid":"%s","stop":{"accountSid":"AC1","callSid":"%s"}}`, seq, sid, s.CallSID)
	return conn.Write(ctx, websocket.MessageText, []byte(stop))
}

// readEchoes reads what the relay sends the caller and times each media
// frame sent in the measured window.
func readEchoes(ctx context.Context, conn *websocket.Conn, untimed bool, measureFrom, stopAt time.Time, st *Stats, readErr chan<- error) {
	var m struct {
		Event string `json:"event"`
		Media struct {
			Payload string `json:"payload"`
		} `json:"media"`
	}
	raw := make([]byte, 160)
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			readErr <- err
			return
		}
		m.Event, m.Media.Payload = "", ""
		if json.Unmarshal(b, &m) != nil || m.Event != "media" {
			continue
		}
		if now := time.Now(); untimed {
			if now.After(measureFrom) && now.Before(stopAt) {
				st.Got++
			}
			continue
		}
		if k, err := base64.StdEncoding.Decode(raw, []byte(m.Media.Payload)); err != nil || k < 8 {
			continue
		}
		sentAt := time.Unix(0, int64(binary.BigEndian.Uint64(raw)))
		if sentAt.After(measureFrom) && sentAt.Before(stopAt) {
			st.Got++
			st.Lat = append(st.Lat, time.Since(sentAt))
		}
	}
}

// ProcCPU returns user+system CPU seconds of pid.
func ProcCPU(pid int) (float64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // USER_HZ is 100 on Linux
}

// ProcCPUPrecise returns the CPU seconds the live threads of pid have
// run, from the nanosecond counts of /proc/pid/task/*/schedstat, where
// ProcCPU counts 10 ms ticks (±2 ms/s over 5 s). It misses the time of
// threads that have exited, so it suits a quiet window, an idle rate, and
// not a busy one.
func ProcCPUPrecise(pid int) (float64, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has exited
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t.Name(), err)
		}
		ns += n
	}
	return float64(ns) / 1e9, nil
}

// ProcIO returns the read and write syscalls pid has made (syscr and
// syscw in /proc/pid/io: read, write, writev and the like, sockets
// included; a read that finds nothing yet, EAGAIN, counts too).
func ProcIO(pid int) (reads, writes int64) {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "io"))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "syscr: "); ok {
			reads, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
		if v, ok := strings.CutPrefix(l, "syscw: "); ok {
			writes, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return reads, writes
}

// ProcMem returns the resident and peak resident memory of pid in MB.
func ProcMem(pid int) (rss, peak float64) {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}

// LoadAverage is the machine's 1-minute load average, for the record of a
// run on a shared machine.
func LoadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
