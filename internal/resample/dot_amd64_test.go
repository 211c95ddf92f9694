//go:build amd64 && !purego

package resample

import (
	"bytes"
	"testing"
)

// withPortable runs f with the vector kernel turned off.
func withPortable(t *testing.T, f func()) {
	t.Helper()
	if !vector {
		t.Log("no AVX2+FMA here: the portable kernel is the one in use anyway")
	}
	saved := vector
	vector = false
	defer func() { vector = saved }()
	f()
}

// The vector and portable kernels add in different orders, so they may
// round an output differently, by one step at most; each keeps the output
// independent of how the input is split.
func TestVectorAndPortableAgree(t *testing.T) {
	src := noisy(24000, 8)
	var d Down3
	fast := d.appendPCM(nil, src)
	var slow []int16
	withPortable(t, func() {
		var d Down3
		slow = d.appendPCM(nil, src)
		whole := (&Down3{}).AppendMuLaw(nil, src)
		if got := chunked(t, src, []int{7, 1, 961, 300}); !bytes.Equal(got, whole) {
			t.Error("portable kernel: chunked output differs from one call's")
		}
	})
	if len(fast) != len(slow) {
		t.Fatalf("%d outputs against %d", len(fast), len(slow))
	}
	differ := 0
	for i := range fast {
		if d := int(fast[i]) - int(slow[i]); d < -1 || d > 1 {
			t.Fatalf("output %d: vector %d, portable %d", i, fast[i], slow[i])
		} else if d != 0 {
			differ++
		}
	}
	t.Logf("%d of %d outputs differ by one step", differ, len(fast))
}
