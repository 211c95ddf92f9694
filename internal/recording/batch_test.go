package recording

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestDecodedLen: the length the relay side takes without decoding is the
// length the payload holds, padded or not, with JSON-escaped slashes.
func TestDecodedLen(t *testing.T) {
	for n := range 300 {
		mu := tone(n, n)
		for name, enc := range map[string]*base64.Encoding{"padded": base64.StdEncoding, "raw": base64.RawStdEncoding} {
			p := []byte(enc.EncodeToString(mu))
			escaped := bytes.ReplaceAll(p, []byte("/"), []byte(`\/`))
			for _, b := range [][]byte{p, escaped} {
				if got := decodedLen(b); got != int64(n) {
					t.Fatalf("%s %d bytes %q: decodedLen = %d", name, n, b, got)
				}
			}
		}
	}
}
