package linmix

import (
	"math"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/rng"
)

// TestPublishNonFiniteRule (issue 25 item 2): with the LDP curator's report bound lifted, a
// report of 1e308s makes the sums infinite; every planner's Publish then returns an error
// (the rule would not encode: its wire form has no NaN or ±Inf), never a rule with non-finite
// numbers, and never panics.
func TestPublishNonFiniteRule(t *testing.T) {
	m := envA(t)
	for _, alg := range []Algorithm{UCRLVTR, UCRLVTRPlus, LinOptVI, LinOptPO} {
		a, err := NewSeeded(m, Config{Algorithm: alg, Mode: LDP, Episodes: 10, Epsilon: 1, Delta: 1e-5}, rng.NewSeed(3))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := a.Session()
		for i := range a.local.bound {
			a.local.bound[i] = math.Inf(1)
		}
		head := s.Expect()
		rep := &protocol.Privatized{Header: head, Blocks: make([][]float64, len(head.Dims.Blocks))}
		for i, n := range head.Dims.Blocks {
			rep.Blocks[i] = make([]float64, n)
			for j := range rep.Blocks[i] {
				rep.Blocks[i][j] = 1e308
			}
		}
		failed := false
		for range 3 {
			if _, _, err := s.Publish(); err != nil {
				failed = true
				break
			}
			if err := s.Receive(rep); err != nil {
				t.Fatalf("%v: %v", alg, err)
			}
		}
		_, rule, err := s.Publish()
		if err == nil {
			if _, err := protocol.EncodeRule(rule); err != nil {
				t.Errorf("%v: published a rule that does not encode: %v", alg, err)
			}
		}
		if !failed && err == nil {
			t.Logf("%v: infinite sums still give a finite rule", alg)
		}
	}
}
