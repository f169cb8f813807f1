package tabular

// Values holds V_h(s) for h = 0..H (V[H] ≡ 0) and, for optimal planning, Q_h(s,a).
type Values struct {
	// V[h][s], h = 0..H; V[H] is all zeros.
	V [][]float64
	// Q[h][s*A+a], h = 0..H−1 (nil for policy evaluation of a deterministic policy).
	Q [][]float64
}

// Start returns E_{s~Init} V_0(s), the value from the initial distribution.
func (m *MDP) Start(v *Values) float64 {
	x := 0.0
	for s, p := range m.Init {
		x += p * v.V[0][s]
	}
	return x
}

// Optimal computes V* and Q* by exact backward induction, O(H·(S·A + non-zero transitions)).
// A terminal state s_h has V_h(s) = TerminalValue(h) and Q_h(s,·) = TerminalValue(h).
func (m *MDP) Optimal() *Values {
	S, A, H := m.S, m.A, m.H
	v := &Values{V: make([][]float64, H+1), Q: make([][]float64, H)}
	v.V[H] = make([]float64, S)
	for h := H - 1; h >= 0; h-- {
		v.V[h] = make([]float64, S)
		v.Q[h] = make([]float64, S*A)
		next := v.V[h+1]
		for s := 0; s < S; s++ {
			if m.IsTerminal(s) {
				tv := m.TerminalValue(h)
				for a := 0; a < A; a++ {
					v.Q[h][s*A+a] = tv
				}
				v.V[h][s] = tv
				continue
			}
			best := 0.0
			for a := 0; a < A; a++ {
				q := m.Reward(h, s, a) + m.Expect(h, s, a, next)
				v.Q[h][s*A+a] = q
				if a == 0 || q > best {
					best = q
				}
			}
			v.V[h][s] = best
		}
	}
	return v
}

// Policy is a step-dependent policy. A deterministic policy sets Act[h][s]; a stochastic one
// sets Prob[h][s*A+a] = π_h(a|s). Exactly one of the two is non-nil.
type Policy struct {
	Act  [][]int
	Prob [][]float64
}

// NewDeterministic returns a deterministic policy with all actions 0, ready to be filled.
func NewDeterministic(S, H int) *Policy {
	p := &Policy{Act: make([][]int, H)}
	for h := range p.Act {
		p.Act[h] = make([]int, S)
	}
	return p
}

// Action returns the action of a deterministic policy at (h, s).
func (p *Policy) Action(h, s int) int { return p.Act[h][s] }

// Evaluate computes V^π exactly by backward induction (O(H·(S + non-zero transitions of the
// chosen actions)) for a deterministic policy, O(H·(S·A + non-zero transitions)) for a
// stochastic one); terminal states have V_h(s) = TerminalValue(h). It does not allocate beyond the result.
func (m *MDP) Evaluate(p *Policy) *Values {
	S, A, H := m.S, m.A, m.H
	v := &Values{V: make([][]float64, H+1)}
	for h := range v.V {
		v.V[h] = make([]float64, S)
	}
	m.evaluateInto(p, v.V)
	_ = A
	return v
}

func (m *MDP) evaluateInto(p *Policy, V [][]float64) {
	S, A, H := m.S, m.A, m.H
	for s := range V[H] {
		V[H][s] = 0
	}
	for h := H - 1; h >= 0; h-- {
		next := V[h+1]
		for s := 0; s < S; s++ {
			if m.IsTerminal(s) {
				V[h][s] = m.TerminalValue(h)
				continue
			}
			if p.Act != nil {
				a := p.Act[h][s]
				V[h][s] = m.Reward(h, s, a) + m.Expect(h, s, a, next)
				continue
			}
			x := 0.0
			for a := 0; a < A; a++ {
				if pa := p.Prob[h][s*A+a]; pa != 0 {
					x += pa * (m.Reward(h, s, a) + m.Expect(h, s, a, next))
				}
			}
			V[h][s] = x
		}
	}
}

// Regret computes per-episode regret V*_1 − V^π_1 exactly, expected over the initial
// distribution, reusing its buffers across calls. Create one per goroutine.
type Regret struct {
	m     *MDP
	vstar float64
	buf   [][]float64
}

// NewRegret precomputes V* for m.
func NewRegret(m *MDP) *Regret {
	r := &Regret{m: m, vstar: m.Start(m.Optimal())}
	r.buf = make([][]float64, m.H+1)
	for h := range r.buf {
		r.buf[h] = make([]float64, m.S)
	}
	return r
}

// OptimalValue returns E_{s~d_1} V*_1(s).
func (r *Regret) OptimalValue() float64 { return r.vstar }

// Of returns E_{s~d_1}[V*_1(s) − V^π_1(s)] for policy p.
func (r *Regret) Of(p *Policy) float64 {
	r.m.evaluateInto(p, r.buf)
	v := 0.0
	for s, q := range r.m.Init {
		v += q * r.buf[0][s]
	}
	return r.vstar - v
}
