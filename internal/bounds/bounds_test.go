package bounds

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestEpsilonRangeText: the range written in errors is the range checked.
func TestEpsilonRangeText(t *testing.T) {
	var lo, hi float64
	if _, err := fmt.Sscanf(EpsilonRange, "[%g, %g]", &lo, &hi); err != nil || lo != EpsilonMin || hi != EpsilonMax {
		t.Fatalf("EpsilonRange %q reads as [%g, %g], want [%g, %g] (%v)", EpsilonRange, lo, hi, EpsilonMin, EpsilonMax, err)
	}
	if _, err := fmt.Sscanf(MultiplierRange, "(0, %g]", &hi); err != nil || hi != MaxMultiplier {
		t.Errorf("MultiplierRange %q reads as (0, %g], want (0, %g] (%v)", MultiplierRange, hi, float64(MaxMultiplier), err)
	}
	for _, c := range []struct {
		eps     float64
		ok, inf bool
	}{{EpsilonMin, true, true}, {EpsilonMax, true, true}, {1, true, true}, {math.Nextafter(EpsilonMin, 0), false, false},
		{math.Nextafter(EpsilonMax, math.Inf(1)), false, false}, {math.NaN(), false, false}, {math.Inf(1), false, true},
		{math.Inf(-1), false, false}, {0, false, false}, {-1, false, false}} {
		if err := Epsilon("eps", c.eps); (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), EpsilonRange)) {
			t.Errorf("Epsilon(%g) = %v", c.eps, err)
		}
		if err := EpsilonOrInf("eps", c.eps); (err == nil) != c.inf {
			t.Errorf("EpsilonOrInf(%g) = %v", c.eps, err)
		}
	}
}

func TestStored(t *testing.T) {
	if err := Stored(1, 1, MaxStoredValues); err != nil {
		t.Error(err)
	}
	for _, c := range [][3]int{{2, 1, MaxStoredValues/2 + 1}, {1 << 21, 1, 1}, {1, 1 << 21, 1}, {1 << 20, 1 << 20, 1 << 20}} {
		if err := Stored(c[0], c[1], c[2]); err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
			t.Errorf("Stored(%v) = %v", c, err)
		}
	}
}

// TestWorkersAndWriteLimits: --workers is checked against MaxWorkers, and the Limits section
// lists every limit.
func TestWorkersAndWriteLimits(t *testing.T) {
	if Workers(0) != nil || Workers(MaxWorkers) != nil || Workers(-1) == nil || Workers(MaxWorkers+1) == nil {
		t.Error("Workers bounds")
	}
	var b strings.Builder
	WriteLimits(&b)
	if !strings.HasPrefix(b.String(), "\n== Limits (every family") || strings.Count(b.String(), "\n") != len(Limits())+2 {
		t.Errorf("WriteLimits:\n%s", b.String())
	}
}
