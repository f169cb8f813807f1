package lq

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/model/lq"
)

// The wire form of the LQ rules (protocol.EncodeRule; a served agent's users decode it). OFU-RL's
// rule, the *Billboard (Episode, T₁, T₂), is its own JSON. practical-ofu-rl's rule is the
// *PracticalPlanner's output for the current release: its confidence set (Set) and reference
// plans (Refs) — what the user plays (Choose, the gains) and the evaluator reads — and nothing of
// the planner's own state (its search buffers, warm starts and optimiser streams stay on the
// curator's side). Floats are in Go's shortest round-trip form, so a decoded rule is
// bit-identical; a search's f values may be ±Inf (a failed Riccati solve), written "+Inf",
// "-Inf" or "NaN".

// practicalWire is the wire form of a *PracticalPlanner.
type practicalWire struct {
	Set  *PracticalSet `json:"set"`
	Refs []refWire     `json:"refs"`
}

type refWire struct {
	X      []float64   `json:"x"`
	Search searchWire  `json:"search"`
	Mode   SearchMode  `json:"mode"`
	Gains  [][]float64 `json:"gains"`
	Zero   bool        `json:"zero"`
}

type searchWire struct {
	Theta     []float64 `json:"theta"`
	F         wireFloat `json:"f"`
	FProjHat  wireFloat `json:"f_proj_hat"`
	Empty     bool      `json:"empty"`
	EarlyExit bool      `json:"early_exit"`
	Fevals    int       `json:"fevals"`
	Iters     int       `json:"iters"`
	BestStart int       `json:"best_start"`
}

// wireFloat is a float64 whose JSON form admits ±Inf and NaN (as strings).
type wireFloat float64

func (f wireFloat) MarshalJSON() ([]byte, error) { return agentkit.FloatJSON(float64(f), false) }

func (f *wireFloat) UnmarshalJSON(b []byte) error {
	if x, ok := agentkit.ParseSpecialFloatJSON(b, false); ok {
		*f = wireFloat(x)
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("lq rule: not a number: %s", b)
	}
	*f = wireFloat(x)
	return nil
}

// MarshalJSON returns the wire form of the planner's published output (Set and Refs).
func (pl *PracticalPlanner) MarshalJSON() ([]byte, error) {
	w := practicalWire{Set: pl.Set, Refs: make([]refWire, len(pl.Refs))}
	for i, rp := range pl.Refs {
		sr := rp.Search
		w.Refs[i] = refWire{X: rp.X, Mode: rp.Mode, Gains: rp.Gains, Zero: rp.Zero, Search: searchWire{Theta: sr.Theta,
			F: wireFloat(sr.F), FProjHat: wireFloat(sr.FProjHat), Empty: sr.Empty, EarlyExit: sr.EarlyExit,
			Fevals: sr.Fevals, Iters: sr.Iters, BestStart: sr.BestStart}}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a published output: a planner that holds only Set and Refs (it plans
// nothing; its users and evaluator read it). Its dimensions are checked against the user's
// system before it is played or evaluated.
func (pl *PracticalPlanner) UnmarshalJSON(b []byte) error {
	var w practicalWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*pl = PracticalPlanner{Set: w.Set, Refs: make([]PracticalRefPlan, len(w.Refs)), index: -1, wire: true}
	for i, r := range w.Refs {
		s := r.Search
		pl.Refs[i] = PracticalRefPlan{X: r.X, Mode: r.Mode, Gains: r.Gains, Zero: r.Zero, Search: SearchResult{Theta: s.Theta,
			F: float64(s.F), FProjHat: float64(s.FProjHat), Empty: s.Empty, EarlyExit: s.EarlyExit,
			Fevals: s.Fevals, Iters: s.Iters, BestStart: s.BestStart}}
	}
	return nil
}

// checkWire checks a decoded planner output against the system (once): a confidence set and at
// least one reference plan of the system's dimensions, with finite numbers. In-process outputs
// are not checked.
func (pl *PracticalPlanner) checkWire(sys *lq.System) error {
	if !pl.wire || pl.checked {
		return nil
	}
	n, d, H := sys.N, sys.D, sys.H
	p := n + d
	if pl.Set == nil {
		return errors.New("lq rule: set missing")
	}
	e := &pl.Set.Set
	switch {
	case e.P != p || e.N != n:
		return fmt.Errorf("lq rule: set.Set has dimensions %d×%d, want %d×%d", e.P, e.N, p, n)
	case len(e.ThetaHat) != p*n || len(e.QV) != p*p || len(e.V) != p:
		return errors.New("lq rule: set.Set has the wrong shape")
	case !finiteAll(e.ThetaHat, e.QV, e.V, []float64{e.Beta}):
		return errors.New("lq rule: set.Set holds a non-finite number")
	case len(pl.Refs) == 0:
		return errors.New("lq rule: no reference plan")
	}
	for j, rp := range pl.Refs {
		if len(rp.X) != n || len(rp.Gains) != H || !finiteAll(rp.X) {
			return fmt.Errorf("lq rule: refs[%d] has the wrong shape (x: %d, want %d; gains: %d, want H = %d)", j, len(rp.X), n, len(rp.Gains), H)
		}
		for h, g := range rp.Gains {
			if len(g) != d*n || !finiteAll(g) {
				return fmt.Errorf("lq rule: refs[%d].gains[%d] has %d entries (want %d) or a non-finite one", j, h, len(g), d*n)
			}
		}
	}
	pl.checked = true
	return nil
}

func finiteAll(xs ...[]float64) bool {
	for _, x := range xs {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
