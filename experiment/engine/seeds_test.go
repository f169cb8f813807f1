package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/bounds"
)

// TestParseSeeds: seed lists are bounded before anything is allocated (at most bounds.MaxSeeds
// seeds in total, over all comma-joined parts), ranges that would wrap at 2⁶⁴ terminate, and
// duplicates are rejected with the seed named.
func TestParseSeeds(t *testing.T) {
	const top = "18446744073709551615" // 2⁶⁴ − 1
	max := bounds.MaxSeeds
	atMost := fmt.Sprintf("at most %d", max)
	for _, c := range []struct {
		in   string
		want []uint64
		err  string
	}{
		{in: "3", want: []uint64{3}},
		{in: "1-5", want: []uint64{1, 2, 3, 4, 5}},
		{in: " 1 , 7-8 ", want: []uint64{1, 7, 8}},
		{in: fmt.Sprintf("0-%d", max-1), want: nil}, // exactly MaxSeeds: checked by length below
		{in: top, want: []uint64{1<<64 - 1}},
		{in: top + "-" + top, want: []uint64{1<<64 - 1}},
		{in: "18446744073709551614-" + top, want: []uint64{1<<64 - 2, 1<<64 - 1}},
		{in: top + "-1", err: "ends before it starts"},
		{in: "5-1", err: "ends before it starts"},
		{in: "0-" + top, err: atMost},
		{in: fmt.Sprintf("0-%d", max), err: atMost},
		{in: fmt.Sprintf("0-%d,%d-%d", max/2, max, max+max/2), err: atMost},
		{in: strings.Repeat(fmt.Sprintf("0-%d,", max-1), 50) + "1", err: atMost},
		{in: fmt.Sprintf("0-%d,%d", max-1, max), err: atMost},
		{in: "1,2,1", err: "seed 1 appears twice"},
		{in: "1-3,3-4", err: "seed 3 appears twice"},
		{in: "", err: "is not a seed"},
		{in: "1,,2", err: "is not a seed"},
		{in: "-5", err: "bad range"},
		{in: "1-", err: "bad range"},
		{in: "1-2-3", err: "bad range"},
		{in: "18446744073709551616", err: "is not a seed"},
		{in: "x", err: "is not a seed"},
	} {
		got, err := ParseSeeds(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSeeds(%.40q): %d seeds, error %v; want an error mentioning %q", c.in, len(got), err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSeeds(%q): %v", c.in, err)
			continue
		}
		if c.want == nil {
			if len(got) != max || got[0] != 0 || got[len(got)-1] != uint64(max-1) {
				t.Errorf("ParseSeeds(%q): %d seeds", c.in, len(got))
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ParseSeeds(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
