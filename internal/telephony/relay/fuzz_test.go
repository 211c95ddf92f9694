package relay

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMediaStreamMessage feeds carrier media stream messages to what the
// relay reads of them (the event type, a media payload, a mark's name and
// its generation and byte count, a DTMF digit): nothing panics, and
// whatever the allocation-free scanner finds agrees with encoding/json.
func FuzzMediaStreamMessage(f *testing.F) {
	for _, seed := range []string{
		`{"event":"connected","protocol":"Call","version":"1.0.0"}`,
		`{"event":"start","sequenceNumber":"1","streamSid":"MZ1","start":{"streamSid":"MZ1","accountSid":"AC1","callSid":"CA1","tracks":["inbound"],"customParameters":{"stream_token":"x"},"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}`,
		`{"event":"media","sequenceNumber":"4","streamSid":"MZ1","media":{"track":"inbound","chunk":"2","timestamp":"5","payload":"f39/fw=="}}`,
		`{"event":"dtmf","sequenceNumber":"5","streamSid":"MZ1","dtmf":{"track":"inbound_track","digit":"1"}}`,
		`{"event":"mark","sequenceNumber":"6","streamSid":"MZ1","mark":{"name":"3:1600"}}`,
		`{"event":"stop","sequenceNumber":"7","streamSid":"MZ1","stop":{"accountSid":"AC1","callSid":"CA1"}}`,
		`{"event":"media","media":{"payload":"a\"b"}}`,
		`{"event":"mark","mark":{"name":"-1:99999999999999999999"}}`,
		` {"event" : "media" , "media" : { "payload" : "" } } `,
		`{"event":"media","media":[1,2]}`, `{"event":`, `[]`, `null`, ``, `{"a":{"b":[{"c":"}"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		// What carrierToModel reads: the event, then per event its part.
		stringField(msg, "event")
		mediaPayload(msg)
		name := markName(msg)
		gen, n, ok := parseMark(name)
		if ok && !bytes.Contains(name, []byte(":")) {
			t.Fatalf("mark %q parsed as %d:%d without a colon", name, gen, n)
		}
		var ev struct {
			DTMF struct {
				Digit string `json:"digit"`
			} `json:"dtmf"`
		}
		json.Unmarshal(msg, &ev) // as Call.dtmf reads it

		// Whatever the scanner finds is what encoding/json finds, in the
		// message and in its media object (messages with a key twice are
		// left out: the scanner takes the first, encoding/json the last).
		agree(t, msg, "event", "streamSid", "media")
		if media, _, ok := field(msg, "media"); ok {
			agree(t, media, "payload", "track")
		}
	})
}

// agree checks that field finds each key's raw value as encoding/json does.
func agree(t *testing.T, msg []byte, keys ...string) {
	t.Helper()
	all, unique := jsonFields(msg)
	if !unique {
		return
	}
	for _, key := range keys {
		v, isString, ok := field(msg, key)
		if !ok {
			continue
		}
		if isString {
			v = append(append([]byte{'"'}, v...), '"')
		}
		if raw, has := all[key]; !has || !bytes.Equal(v, raw) {
			t.Fatalf("%s: scanner %q, encoding/json %q (in %q)", key, v, raw, msg)
		}
	}
}

// jsonFields decodes a JSON object's top level, and reports false when it
// is not one or has a key twice.
func jsonFields(msg []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m == nil {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(msg))
	d.Token() // {
	n := 0
	for d.More() {
		if _, err := d.Token(); err != nil {
			return nil, false
		}
		var v json.RawMessage
		if d.Decode(&v) != nil {
			return nil, false
		}
		n++
	}
	return m, n == len(m)
}
