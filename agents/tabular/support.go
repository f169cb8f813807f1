package tabular

import (
	"fmt"
	"slices"

	model "github.com/dprl/dprl/model/tabular"
)

// Public support (model.MDP.PublicSupport): a simulator that publishes its transition table
// makes the support of the transitions — for every (s, a) the next states s' it can reach, the
// rules of the environment (FrozenLake's slip to three neighbours), not the probabilities —
// public structure, like the terminal states (terminal.go) and a public reward table
// (public.go). A practical agent given it (PracticalPrivacy.PublicSupport,
// PracticalConfig.Support, which the runners fill with SupportOf of the model):
//
//   - releases the transition counts N(s,a,s') only inside the support: a user's contribution
//     (the JDP counter's input, the LDP user's report) has one coordinate per (g, s, a, s′)
//     with s′ in the support of (s, a), none for the cells of terminal states (a transition out
//     of a terminal state does not exist), so noise is drawn only there. Her kept counts are
//     exactly those without public support (an honest trajectory never leaves the support; one
//     that does is refused before anything is counted), so ‖x − x′‖₂ and the sensitivity Δ₂
//     (PracticalSensitivity) are unchanged and σ is fixed from the same public parameters;
//   - plans with P̂(s'|s,a) = 0 exactly outside the support: every estimator (the effective and
//     plugin UCB estimators, dense and sparse, and PSRL) replaces S by the support's size k
//     (the noise variance of the row sum is k·σ_t², the optimistic prior spreads α over the k
//     next states, PSRL's Dirichlet has k coordinates);
//   - states it in its privacy report (PublicSupportStructure).
//
// The support is the union over h of the supports of P_h(·|s,a) (one set per (s, a), also for
// per-step statistics). On a deterministic environment the support is the whole transition
// function: there is nothing left to learn about P, only the rewards (if private). The
// noise-off twins use it too, so the privacy cost is measured against a twin with the same
// public knowledge. Without public support nothing changes, bit for bit.

// supportSet is a practical agent's copy of the environment's public transition support: the
// next states of cell c = s·A+a are next[off[c]:off[c+1]] (increasing; none for a terminal
// state), and idx[c·S+s'] is the position of (c, s') in one group's compact block (off[c] +
// rank), −1 outside the support.
type supportSet struct {
	S, A int
	off  []int32
	next []int32
	idx  []int32
}

// newSupport checks the public support given to an (S, A) agent — rows has S·A rows, row
// s·A+a the next states of (s, a), each in [0, S), increasing, non-empty for a non-terminal
// state — and copies it without the rows of terminal states; it returns nil when the support
// is not public (then rows must be nil). prefix names the configuration (e.g. "agent").
func newSupport(prefix string, S, A int, public bool, rows [][]int, term terminal) (*supportSet, error) {
	if !public {
		if rows != nil {
			return nil, fmt.Errorf("%s.support: a public support is given but privacy.public_support is false", prefix)
		}
		return nil, nil
	}
	if len(rows) != S*A {
		return nil, fmt.Errorf("%s.support: public support needs one row per (s, a): %d rows, want S*A = %d", prefix, len(rows), S*A)
	}
	n := 0
	for c, row := range rows {
		if len(row) > S {
			return nil, fmt.Errorf("%s.support[%d][%d]: %d next states, at most S = %d", prefix, c/A, c%A, len(row), S)
		}
		if !term.is(c / A) {
			n += len(row)
		}
	}
	u := &supportSet{S: S, A: A, off: make([]int32, S*A+1), next: make([]int32, 0, n), idx: make([]int32, S*A*S)}
	for i := range u.idx {
		u.idx[i] = -1
	}
	for c, row := range rows {
		s, a := c/A, c%A
		if term.is(s) {
			u.off[c+1] = int32(len(u.next))
			continue // a transition out of a terminal state does not exist
		}
		if len(row) == 0 {
			return nil, fmt.Errorf("%s.support[%d][%d]: a non-terminal state's action needs at least one next state", prefix, s, a)
		}
		for k, s2 := range row {
			if s2 < 0 || s2 >= S {
				return nil, fmt.Errorf("%s.support[%d][%d][%d]: next state must be in [0, %d], got %d", prefix, s, a, k, S-1, s2)
			}
			if k > 0 && s2 <= row[k-1] {
				return nil, fmt.Errorf("%s.support[%d][%d][%d]: next states must be increasing, got %d after %d", prefix, s, a, k, s2, row[k-1])
			}
			u.idx[c*S+s2] = int32(len(u.next))
			u.next = append(u.next, int32(s2))
		}
		u.off[c+1] = int32(len(u.next))
	}
	return u, nil
}

// entries returns the number of (s, a, s′) in the support (one group's compact block).
func (u *supportSet) entries() int { return len(u.next) }

// size returns the number k of next states of cell c (s·A+a); 0 for a terminal state.
func (u *supportSet) size(c int) int { return int(u.off[c+1] - u.off[c]) }

// row returns the next states of cell c.
func (u *supportSet) row(c int) []int32 { return u.next[u.off[c]:u.off[c+1]] }

// in reports whether s' is in the support of cell c.
func (u *supportSet) in(c, s2 int) bool { return u.idx[c*u.S+s2] >= 0 }

// scatter writes the compact transition block src (groups × entries) into the dense layout
// dst (groups × S·A·S, Release.NT) — dst[((g·S+s)·A+a)·S+s'] = src[g·entries + position]; dst
// is left unchanged outside the support (zero in a release) — adding instead of setting when
// add.
func (u *supportSet) scatter(dst, src []float64, add bool) {
	S, cells, n := u.S, u.S*u.A, len(u.next)
	for g := 0; g*n < len(src); g++ {
		blk := src[g*n : (g+1)*n]
		for c := 0; c < cells; c++ {
			base := (g*cells + c) * S
			for k := u.off[c]; k < u.off[c+1]; k++ {
				if add {
					dst[base+int(u.next[k])] += blk[k]
				} else {
					dst[base+int(u.next[k])] = blk[k]
				}
			}
		}
	}
}

// same checks that the environment m declares its support public and has exactly this one
// (SupportOf, terminal states' rows aside). A nil set (support not public to the agent)
// accepts every m.
func (u *supportSet) same(m *model.MDP) error {
	if u == nil {
		return nil
	}
	if !m.PublicSupport {
		return fmt.Errorf("agent.support: the agent uses a public support but the environment does not declare its support public")
	}
	rows := SupportOf(m)
	for c, row := range rows {
		if m.IsTerminal(c / u.A) {
			continue
		}
		got := u.row(c)
		if len(got) != len(row) {
			return fmt.Errorf("agent.support[%d][%d]: the environment's support differs from the agent's", c/u.A, c%u.A)
		}
		for k, s2 := range row {
			if int(got[k]) != s2 {
				return fmt.Errorf("agent.support[%d][%d]: the environment's support differs from the agent's", c/u.A, c%u.A)
			}
		}
	}
	return nil
}

// SupportOf returns the support of m's transitions in the form PracticalConfig.Support takes:
// for every cell s·A+a the increasing list of next states s' with P_h(s'|s,a) > 0 for some h
// (the union over the steps; a validated m). Rows of terminal states are whatever the model
// holds (possibly empty); the agents ignore them.
func SupportOf(m *model.MDP) [][]int {
	S, A := m.S, m.A
	rows := make([][]int, S*A)
	mark := make([]int, S) // mark[s'] = c+1: s' is already in row c
	for c := range rows {
		for h := 0; h < m.H; h++ {
			if h > 0 && m.Sparse[h] == m.Sparse[h-1] {
				continue // the same table (a homogeneous model): the same supports
			}
			t := m.Sparse[h]
			for _, s2 := range t.Next[t.Off[c]:t.Off[c+1]] {
				if mark[s2] != c+1 {
					mark[s2] = c + 1
					rows[c] = append(rows[c], int(s2))
				}
			}
		}
		slices.Sort(rows[c])
	}
	return rows
}
