package relay

import "bytes"

// The relay reads only what it needs of each message: the event type and,
// for audio, the base64 payload, as slices of the message itself. This small
// scanner walks the top level of a JSON object without allocating; messages
// it does not need to look into (rare control events) are decoded with
// encoding/json instead.

// field finds the top-level key in a JSON object and returns its raw value
// (for a string: the bytes between the quotes, still escaped). ok is false
// when the key is missing or the message is not a well-formed object.
func field(msg []byte, key string) (val []byte, isString, ok bool) {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return nil, false, false
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != '"' {
			return nil, false, false
		}
		kStart := i + 1
		kEnd, next := scanString(msg, i)
		if next < 0 {
			return nil, false, false
		}
		i = skipSpace(msg, next)
		if i >= len(msg) || msg[i] != ':' {
			return nil, false, false
		}
		i = skipSpace(msg, i+1)
		vStart := i
		vEnd := skipValue(msg, i)
		if vEnd < 0 {
			return nil, false, false
		}
		if string(msg[kStart:kEnd]) == key {
			if msg[vStart] == '"' {
				return msg[vStart+1 : vEnd-1], true, true
			}
			return msg[vStart:vEnd], false, true
		}
		i = skipSpace(msg, vEnd)
		if i >= len(msg) {
			return nil, false, false
		}
		if msg[i] == '}' {
			return nil, false, false
		}
		if msg[i] != ',' {
			return nil, false, false
		}
		i++
	}
}

// stringField returns the raw (still escaped) contents of a top-level string
// field, or nil.
func stringField(msg []byte, key string) []byte {
	v, isString, ok := field(msg, key)
	if !ok || !isString {
		return nil
	}
	return v
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// scanString takes i at an opening quote and returns the index of the
// closing quote and the index after it, or -1 when unterminated. It jumps
// from quote to quote (bytes.IndexByte, vectorized) instead of walking each
// byte: an audio payload is a few hundred bytes of base64 with no quote in
// it. A quote is the closing one when an even number of backslashes, none
// included, comes right before it.
func scanString(b []byte, i int) (end, next int) {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1, -1
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q, q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index just after the JSON value that starts at i,
// or -1 when it is malformed.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		_, next := scanString(b, i)
		return next
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				_, next := scanString(b, j)
				if next < 0 {
					return -1
				}
				j = next - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// eachField calls fn with each top-level key (still escaped) and raw value
// of a JSON object (a string's without its quotes), until fn returns
// false or the object ends or is malformed. The Gemini side reads its
// messages by it: each holds one of a few keys.
func eachField(msg []byte, fn func(key, val []byte) bool) {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != '"' {
			return
		}
		kEnd, next := scanString(msg, i)
		if next < 0 {
			return
		}
		key := msg[i+1 : kEnd]
		i = skipSpace(msg, next)
		if i >= len(msg) || msg[i] != ':' {
			return
		}
		vStart := skipSpace(msg, i+1)
		vEnd := skipValue(msg, vStart)
		if vEnd < 0 {
			return
		}
		val := msg[vStart:vEnd]
		if msg[vStart] == '"' {
			val = msg[vStart+1 : vEnd-1]
		}
		if !fn(key, val) {
			return
		}
		i = skipSpace(msg, vEnd)
		if i >= len(msg) || msg[i] != ',' {
			return
		}
		i++
	}
}

// eachElem calls fn with each element of a JSON array, until fn returns
// false or the array ends or is malformed.
func eachElem(arr []byte, fn func(elem []byte) bool) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i++
	for {
		i = skipSpace(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		end := skipValue(arr, i)
		if end < 0 || !fn(arr[i:end]) {
			return
		}
		i = skipSpace(arr, end)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i++
	}
}
