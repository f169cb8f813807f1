// Package cfgfiletest holds the check the families' configuration tests share: a
// configuration edited in one place is refused with an error naming what is wrong.
package cfgfiletest

import (
	"strings"
	"testing"
)

// Refused checks that parse refuses doc with its first from replaced by to (doc must contain
// from, so that the case cannot pass vacuously) with an error containing every want.
func Refused(t *testing.T, parse func([]byte) error, doc, from, to string, want ...string) {
	t.Helper()
	if !strings.Contains(doc, from) {
		t.Fatalf("config lacks %q", from)
	}
	err := parse([]byte(strings.Replace(doc, from, to, 1)))
	ok := err != nil
	for _, w := range want {
		ok = ok && strings.Contains(err.Error(), w)
	}
	if !ok {
		t.Errorf("%q → %q: error %v, want one containing %q", from, to, err, want)
	}
}
