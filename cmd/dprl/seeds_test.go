package main

import (
	"slices"
	"strings"
	"testing"
)

// TestParseSeeds: seed lists are bounded before anything is allocated (at most maxSeeds seeds
// in total, over all comma-joined parts), ranges that would wrap at 2⁶⁴ terminate, and
// duplicates are rejected with the seed named.
func TestParseSeeds(t *testing.T) {
	const top = "18446744073709551615" // 2⁶⁴ − 1
	for _, c := range []struct {
		in   string
		want []uint64
		err  string
	}{
		{in: "3", want: []uint64{3}},
		{in: "1-5", want: []uint64{1, 2, 3, 4, 5}},
		{in: " 1 , 7-8 ", want: []uint64{1, 7, 8}},
		{in: "0-9999", want: nil}, // exactly maxSeeds: checked by length below
		{in: top, want: []uint64{1<<64 - 1}},
		{in: top + "-" + top, want: []uint64{1<<64 - 1}},
		{in: "18446744073709551614-" + top, want: []uint64{1<<64 - 2, 1<<64 - 1}},
		{in: top + "-1", err: "ends before it starts"},
		{in: "5-1", err: "ends before it starts"},
		{in: "0-" + top, err: "at most 10000"},
		{in: "0-10000", err: "at most 10000"},
		{in: "0-5000,6000-11000", err: "at most 10000"},
		{in: strings.Repeat("0-9999,", 50) + "1", err: "at most 10000"},
		{in: "1,2,1", err: "seed 1 appears twice"},
		{in: "1-3,3-4", err: "seed 3 appears twice"},
		{in: "", err: "--seeds"},
		{in: "1,,2", err: "--seeds"},
		{in: "-5", err: "--seeds"},
		{in: "1-", err: "--seeds"},
		{in: "1-2-3", err: "--seeds"},
		{in: "18446744073709551616", err: "--seeds"},
		{in: "x", err: "--seeds"},
	} {
		got, err := parseSeeds(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseSeeds(%.40q): %d seeds, error %v; want an error mentioning %q", c.in, len(got), err, c.err)
			}
			if _, ok := err.(usageError); err != nil && !ok {
				t.Errorf("parseSeeds(%.40q): error %T is not bad input", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSeeds(%q): %v", c.in, err)
			continue
		}
		if c.want == nil {
			if len(got) != maxSeeds || got[0] != 0 || got[len(got)-1] != maxSeeds-1 {
				t.Errorf("parseSeeds(%q): %d seeds", c.in, len(got))
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("parseSeeds(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
