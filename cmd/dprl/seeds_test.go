package main

import (
	"slices"
	"strings"
	"testing"
)

// TestParseSeeds: --seeds is parsed by engine.ParseSeeds (TestParseSeeds there checks the
// bounds, ranges and duplicates); its errors are bad input (exit status 2) naming --seeds.
func TestParseSeeds(t *testing.T) {
	if got, err := parseSeeds(" 1 , 7-8 "); err != nil || !slices.Equal(got, []uint64{1, 7, 8}) {
		t.Errorf("parseSeeds: %v, %v", got, err)
	}
	for _, in := range []string{"", "x", "5-1", "1,2,1", "0-1000", "1-"} {
		_, err := parseSeeds(in)
		if _, ok := err.(usageError); !ok || !strings.HasPrefix(err.Error(), "--seeds: ") {
			t.Errorf("parseSeeds(%q): error %v (%T), want bad input naming --seeds", in, err, err)
		}
	}
}
