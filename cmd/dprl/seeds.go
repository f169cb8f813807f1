package main

import (
	"strconv"
	"strings"
)

// maxSeeds bounds the number of seeds one --seeds flag may name, over all its comma-joined
// parts: each seed is a whole run, and the list is allocated before any of them starts.
const maxSeeds = 10000

// parseSeeds parses a seed list: single seeds and inclusive ranges joined by commas, e.g.
// "3", "1-5", "1,2,7" or "1-5,10-12". Seeds are unsigned 64-bit integers. The list is bounded
// before it is built (at most maxSeeds seeds in total; a range is counted, never enumerated
// past its end, so ranges near 2⁶⁴−1 cannot wrap), and a seed named twice is rejected, because
// two runs with the same seed would be the same run counted twice in every mean and interval.
func parseSeeds(s string) ([]uint64, error) {
	const want = "want e.g. 3, 1-5 or 1,2,7: non-negative integers below 2^64"
	var out []uint64
	seen := map[uint64]bool{}
	add := func(v uint64) error {
		if seen[v] {
			return badInput("--seeds: seed %d appears twice in %q (each seed must be distinct)", v, s)
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
				return nil, badInput("--seeds: bad range %q (%s)", part, want)
			}
			if b < a {
				return nil, badInput("--seeds: range %q ends before it starts (want lo-hi with lo <= hi)", part)
			}
			if n := b - a; n >= uint64(maxSeeds-len(out)) {
				return nil, badInput("--seeds: %q names more than %d seeds in total (at most %d seeds)", s, maxSeeds, maxSeeds)
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
			return nil, badInput("--seeds: %q is not a seed (%s)", part, want)
		}
		if len(out) >= maxSeeds {
			return nil, badInput("--seeds: %q names more than %d seeds in total (at most %d seeds)", s, maxSeeds, maxSeeds)
		}
		if err := add(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
