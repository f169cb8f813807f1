package servicetest

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
)

// scripted is a session whose Publish returns the scripted versions and rules in turn (the
// other methods are not used by Curator.Publish).
type scripted struct {
	protocol.Session
	versions []uint64
	rules    []any
}

func (s *scripted) Publish() (uint64, any, error) {
	v, r := s.versions[0], s.rules[0]
	s.versions, s.rules = s.versions[1:], s.rules[1:]
	return v, r, nil
}

// TestCuratorPublish: the curator records each version's rule in its wire form; a version
// published again with the same rule is accepted, with another rule refused.
func TestCuratorPublish(t *testing.T) {
	s := &scripted{versions: []uint64{1, 1, 2, 2}, rules: []any{[]int{1}, []int{1}, []int{2}, []int{3}}}
	c, err := NewCurator(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(); err != nil {
		t.Fatalf("version 1 again, the same rule: %v", err)
	}
	if err := c.Publish(); err != nil || c.Last != 2 || string(c.Rule()) != "[2]" || string(c.Rules[1]) != "[1]" {
		t.Fatalf("version 2: last %d, rule %s, version 1 %s, %v", c.Last, c.Rule(), c.Rules[1], err)
	}
	if err := c.Publish(); err == nil || !strings.Contains(err.Error(), "version 2 changed") {
		t.Fatalf("version 2 again with another rule: %v", err)
	}
}
