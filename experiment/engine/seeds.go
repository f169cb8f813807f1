package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dprl/dprl/internal/bounds"
)

// ParseSeeds parses a seed list as the command line writes it (--seeds): single seeds and
// inclusive ranges joined by commas, e.g. "3", "1-5", "1,2,7" or "1-5,10-12". Seeds are
// unsigned 64-bit integers. The list is bounded before it is built (at most bounds.MaxSeeds
// seeds in total; a range is counted, never enumerated past its end, so ranges near 2⁶⁴−1
// cannot wrap), and a seed named twice is rejected, because two runs with the same seed would be
// the same run counted twice in every mean and interval.
func ParseSeeds(s string) ([]uint64, error) {
	const want = "want e.g. 3, 1-5 or 1,2,7: non-negative integers below 2^64"
	tooMany := func() error {
		return fmt.Errorf("%q names more than %d seeds in total (at most %d seeds)", s, bounds.MaxSeeds, bounds.MaxSeeds)
	}
	var out []uint64
	seen := map[uint64]bool{}
	add := func(v uint64) error {
		if seen[v] {
			return fmt.Errorf("seed %d appears twice in %q (each seed must be distinct)", v, s)
		}
		seen[v] = true
		out = append(out, v)
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if lo, hi, ok := strings.Cut(part, "-"); ok {
			a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
			b, err2 := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("bad range %q (%s)", part, want)
			}
			if b < a {
				return nil, fmt.Errorf("range %q ends before it starts (want lo-hi with lo <= hi)", part)
			}
			if n := b - a; n >= uint64(bounds.MaxSeeds-len(out)) {
				return nil, tooMany()
			}
			for i := uint64(0); i <= b-a; i++ {
				if err := add(a + i); err != nil {
					return nil, err
				}
			}
			continue
		}
		v, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed (%s)", part, want)
		}
		if len(out) >= bounds.MaxSeeds {
			return nil, tooMany()
		}
		if err := add(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
