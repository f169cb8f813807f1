package noise

import (
	"math"
	"testing"
)

// TestSecureStateRoundTrip: a Secure source restored from MarshalBinary after some draws
// continues exactly as the original (every later draw bit-identical, Laplace sign bits
// included), while a fresh source with the same key — the stream position lost — redraws the
// noise already released.
func TestSecureStateRoundTrip(t *testing.T) {
	key := [32]byte{7}
	for _, skip := range []int{0, 1, 3, 64, 65, 1000} {
		a := NewSecureFromKey(key)
		for i := range skip {
			a.AddLaplace(float64(i), 1)
			a.AddGaussian(0, 2)
		}
		b, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var r Secure // a zero source restores too
		if err := r.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		fresh := NewSecureFromKey(key)
		same := 0
		for i := range 200 {
			x, y, z := a.AddLaplace(0, 1), r.AddLaplace(0, 1), fresh.AddLaplace(0, 1)
			if math.Float64bits(x) != math.Float64bits(y) {
				t.Fatalf("skip %d: draw %d: restored %v, original %v", skip, i, y, x)
			}
			if x == z {
				same++
			}
			if g, h := a.AddGaussian(0, 3), r.AddGaussian(0, 3); math.Float64bits(g) != math.Float64bits(h) {
				t.Fatalf("skip %d: Gaussian draw %d: restored %v, original %v", skip, i, h, g)
			}
		}
		if skip > 0 && same > 100 {
			t.Errorf("skip %d: a fresh source drew %d of 200 draws like the advanced one", skip, same)
		}
	}
	for _, bad := range [][]byte{nil, make([]byte, 8), append(make([]byte, 8), 65)} {
		var r Secure
		if err := r.UnmarshalBinary(bad); err == nil {
			t.Errorf("UnmarshalBinary(%x) accepted", bad)
		}
	}
}
