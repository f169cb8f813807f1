package service

import (
	"testing"
	"time"
)

// TestLingerWait: a group waits for more reports only when it holds less than half as many as
// the last group appended, for half the last commit's duration, at most maxLinger.
func TestLingerWait(t *testing.T) {
	for _, c := range []struct {
		name        string
		n, max, prv int
		last, want  time.Duration
	}{
		{"lone user", 1, 512, 1, 10 * time.Millisecond, 0},
		{"half of the last group", 5, 512, 10, 10 * time.Millisecond, 0},
		{"first group", 1, 512, 0, 0, 0},
		{"full", 4, 4, 64, 10 * time.Millisecond, 0},
		{"a few after a large group", 1, 512, 64, 3 * time.Millisecond, 1500 * time.Microsecond},
		{"at most maxLinger", 31, 512, 64, time.Second, maxLinger},
	} {
		if got := lingerWait(c.n, c.max, c.prv, c.last); got != c.want {
			t.Errorf("%s: lingerWait(%d, %d, %d, %v) = %v, want %v", c.name, c.n, c.max, c.prv, c.last, got, c.want)
		}
	}
}
