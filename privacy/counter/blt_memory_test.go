package counter

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/dprl/dprl/privacy/noise"
)

// TestBLTMemoryIndependentOfCapacity: a BLT counter's state is O(buffers·Dim) (practical-privacy
// spec §3); nothing of size T is kept or even built, so a counter for 10⁶ releases allocates
// far less than one float64 per release, and its current std is exact (equal to the O(t·d)
// recomputation) after every insertion.
func TestBLTMemoryIndependentOfCapacity(t *testing.T) {
	p, err := FitSqrtBLT(1024, DefaultBLTBuffers)
	if err != nil {
		t.Fatal(err)
	}
	const T = 1_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := NewBLT(GaussianConfig{Dim: 4, Capacity: T, Sigma: 1}, p, noise.NewSeeded(rand.New(rand.NewPCG(1, 2))))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > T { // a table would take 8·T bytes
		t.Errorf("NewBLT with capacity %d allocated %d bytes, want O(buffers·Dim)", T, got)
	}
	x := []float64{1, 0, 0, 0}
	for i := 1; i <= 50; i++ {
		if err := c.Insert(x); err != nil {
			t.Fatal(err)
		}
		if got, want := c.PrefixStd(), c.StdAt(i); got != want {
			t.Fatalf("t=%d: PrefixStd %v != StdAt %v", i, got, want)
		}
		if got, want := c.PrefixStd()*c.PrefixStd(), p.decoderSumSquares(i); got != want && (got-want)/want > 1e-15 {
			t.Fatalf("t=%d: running variance %v, recomputed %v", i, got, want)
		}
	}
}

// TestBLTStdAtAnyOrder: StdAt at times other than the current one (forward, backward,
// repeated) equals the direct recomputation bit for bit.
func TestBLTStdAtAnyOrder(t *testing.T) {
	p, err := FitSqrtBLT(512, DefaultBLTBuffers)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewBLT(GaussianConfig{Dim: 1, Capacity: 512, Sigma: 2}, p, noise.NewSeeded(rand.New(rand.NewPCG(3, 4))))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []int{7, 8, 300, 3, 3, 512, 1, 0, 200} {
		want := 0.0
		if q > 0 {
			want = 2 * math.Sqrt(p.decoderSumSquares(q))
		}
		if got := c.StdAt(q); got != want {
			t.Errorf("StdAt(%d) = %v, want %v", q, got, want)
		}
	}
}
