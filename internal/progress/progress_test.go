package progress

import (
	"bytes"
	"strings"
	"testing"
)

// TestPlainLines: off a terminal, one line per 10 % with the counts and an ETA; quiet shows
// nothing.
func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	update, finish := New(&b, "job", "runs", false)
	for done := int64(1); done <= 100; done++ {
		update(done, 100)
	}
	finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[0], "dprl: job: 1/100 runs (0%), elapsed ") ||
		!strings.HasPrefix(lines[10], "dprl: job: 100/100 runs (100%)") || !strings.Contains(lines[5], "eta ") {
		t.Errorf("progress lines:\n%s", b.String())
	}
	b.Reset()
	update, finish = New(&b, "job", "runs", true)
	finish()
	if update != nil || b.Len() != 0 {
		t.Errorf("quiet: update %v, output %q", update != nil, b.String())
	}
}
