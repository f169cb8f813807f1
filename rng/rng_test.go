package rng

import (
	"math"
	"testing"
)

func TestDeterministic(t *testing.T) {
	a := NewSeed(7).Child("env").Index(3).Rand()
	b := NewSeed(7).Child("env").Index(3).Rand()
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same path gave different streams")
		}
	}
}

func TestDistinctPaths(t *testing.T) {
	seeds := []Seed{
		NewSeed(1), NewSeed(2), NewSeed(1).Child("a"), NewSeed(1).Child("b"),
		NewSeed(1).Index(0), NewSeed(1).Index(1), NewSeed(1).Child("a").Index(0),
		NewSeed(1).Index(0).Child("a"), NewSeed(0), NewSeed(0).Index(0),
	}
	seen := map[uint64]int{}
	for i, s := range seeds {
		v := s.Rand().Uint64()
		if j, ok := seen[v]; ok {
			t.Fatalf("paths %d and %d gave the same first draw", j, i)
		}
		seen[v] = i
	}
}

// TestChildStreamsUncorrelated checks that sibling streams are not correlated: the sample
// correlation of 1e5 uniform pairs must be within 5 standard errors (1/sqrt(n)) of 0.
func TestChildStreamsUncorrelated(t *testing.T) {
	const n = 100000
	for i := uint64(0); i < 4; i++ {
		a := NewSeed(99).Index(i).Rand()
		b := NewSeed(99).Index(i + 1).Rand()
		var sx, sy, sxy, sxx, syy float64
		for k := 0; k < n; k++ {
			x, y := a.Float64(), b.Float64()
			sx += x
			sy += y
			sxy += x * y
			sxx += x * x
			syy += y * y
		}
		cov := sxy/n - sx/n*sy/n
		r := cov / math.Sqrt((sxx/n-sx*sx/n/n)*(syy/n-sy*sy/n/n))
		if math.Abs(r) > 5/math.Sqrt(n) {
			t.Fatalf("streams %d,%d correlated: r=%g", i, i+1, r)
		}
	}
}
