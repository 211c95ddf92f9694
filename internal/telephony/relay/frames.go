package relay

import (
	"bytes"
	"strconv"
)

// mediaPayload returns the media object of a carrier media message and its
// base64 payload (nil when missing); the object holds its timestamp too.
func mediaPayload(msg []byte) (media, payload []byte) {
	media, _, ok := field(msg, "media")
	if !ok {
		return nil, nil
	}
	return media, stringField(media, "payload")
}

// mediaTimestamp returns media.timestamp (a string of digits, ms since the
// stream started) of a media message's media object, or -1.
func mediaTimestamp(media []byte) int64 {
	v, _, ok := field(media, "timestamp")
	if !ok || len(v) == 0 || len(v) > 15 {
		return -1
	}
	var n int64
	for _, d := range v {
		if d < '0' || d > '9' {
			return -1
		}
		n = n*10 + int64(d-'0')
	}
	return n
}

func markName(msg []byte) []byte {
	mark, _, ok := field(msg, "mark")
	if !ok {
		return nil
	}
	return stringField(mark, "name")
}

func padding(b64 []byte) int {
	n := 0
	for i := len(b64) - 1; i >= 0 && b64[i] == '='; i-- {
		n++
	}
	return n
}

// Outgoing messages are appended into reused buffers. Payloads and ids are
// base64 or carrier/model identifiers: they hold nothing JSON must escape.

func appendAudio(out, payload []byte) []byte {
	out = append(out, `{"type":"input_audio_buffer.append","audio":"`...)
	out = append(out, payload...)
	return append(out, `"}`...)
}

func appendMedia(out []byte, streamSID string, payload []byte) []byte {
	out = append(out, `{"event":"media","streamSid":"`...)
	out = append(out, streamSID...)
	out = append(out, `","media":{"payload":"`...)
	out = append(out, payload...)
	return append(out, `"}}`...)
}

// Mark names are "gen:bytes": the item generation and the audio bytes of that
// item sent before the mark.
func appendMark(out []byte, streamSID string, gen, sentBytes int64) []byte {
	out = append(out, `{"event":"mark","streamSid":"`...)
	out = append(out, streamSID...)
	out = append(out, `","mark":{"name":"`...)
	out = strconv.AppendInt(out, gen, 10)
	out = append(out, ':')
	out = strconv.AppendInt(out, sentBytes, 10)
	return append(out, `"}}`...)
}

func parseMark(name []byte) (gen, sentBytes int64, ok bool) {
	i := bytes.IndexByte(name, ':')
	if i < 0 {
		return 0, 0, false
	}
	g, err1 := strconv.ParseInt(string(name[:i]), 10, 64)
	n, err2 := strconv.ParseInt(string(name[i+1:]), 10, 64)
	return g, n, err1 == nil && err2 == nil
}

func appendClear(out []byte, streamSID string) []byte {
	out = append(out, `{"event":"clear","streamSid":"`...)
	out = append(out, streamSID...)
	return append(out, `"}`...)
}
