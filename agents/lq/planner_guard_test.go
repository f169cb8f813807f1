package lq

import (
	"errors"
	"math"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/rng"
)

// TestPracticalPlannerNonFinite (issue 25 item 2): the practical planner returns an error, never
// panics, on a release with a NaN, an infinity or huge finite numbers.
func TestPracticalPlannerNonFinite(t *testing.T) {
	sys := lq.LQE1()
	pub := PublicOf(sys)
	cfg := DefaultPracticalConfig(1, 300)
	p := pub.N + pub.D
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308} {
		for _, field := range []string{"V", "U", "Std"} {
			_, _, opt := PracticalStreams(rng.NewSeed(5))
			pl, err := NewPracticalPlanner(pub, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			rel := &PracticalRelease{Index: 1, Users: 8, V: make([]float64, p*p), U: make([]float64, p*pub.N), Std: 1}
			for i := 0; i < p; i++ {
				rel.V[i*p+i] = 10
			}
			switch field {
			case "V":
				rel.V[0] = v
			case "U":
				rel.U[1] = v
			default:
				rel.Std = v
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s = %g: Prepare panicked: %v", field, v, r)
					}
				}()
				if err := pl.Prepare(rel); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
					t.Errorf("%s = %g: Prepare accepted a non-finite release", field, v)
				}
			}()
		}
	}
}

// TestServerRefusesOverflowingPair (issue 25 item 2): OFU-RL's curator refuses, naming the
// field, a path whose pair norm overflows (it cannot be scaled), and accepts huge finite
// values whose norm is finite (scaled into the ball); its published billboard stays finite.
func TestServerRefusesOverflowingPair(t *testing.T) {
	_, pub, cfg, consts := lqE1(t, 20)
	cur, err := NewCurator(pub, cfg, consts, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(cur, "private-ofu-rl", 20)
	path := func(v float64, at string) *protocol.Path {
		r := &protocol.Path{Header: s.Expect(), States: make([][]float64, pub.H+1), Inputs: make([][]float64, pub.H)}
		for h := range r.States {
			r.States[h] = make([]float64, pub.N)
		}
		for h := range r.Inputs {
			r.Inputs[h] = make([]float64, pub.D)
		}
		if at == "states" {
			r.States[3][0], r.States[3][1] = v, v
		} else {
			r.Inputs[2][0] = v
			r.States[2][0] = v
		}
		return r
	}
	for _, c := range []struct {
		v     float64
		at    string
		field string
	}{{1e308, "states", "states[3]"}, {1e200, "states", "states[3]"}, {-1e200, "inputs", "inputs[2]"}, {1e150, "states", ""}, {1e100, "inputs", ""}} {
		err := s.Receive(path(c.v, c.at))
		var fe *protocol.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%g in %s: refused %v, want accepted and scaled", c.v, c.at, err)
		case c.field != "" && (err == nil || !errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%g in %s: got %v, want a FieldError naming %s", c.v, c.at, err, c.field)
		}
		if _, err := s.Publish(); err != nil {
			t.Errorf("%g in %s: publish: %v", c.v, c.at, err)
		}
	}
}
