package tabular

import (
	"math"
	"math/rand/v2"

	model "github.com/dprl/dprl/model/tabular"
)

// Planner turns a Billboard into the policy for the next user. Implementations read user data
// only through the billboard.
type Planner interface {
	// Plan writes the greedy policy π_k for the release b into pol.
	Plan(b *Billboard, pol *model.Policy) error
	// Diagnostics reports planner counters (e.g. LP fallbacks).
	Diagnostics() PlannerStats
}

// PlannerStats are counters a planner accumulates over a run.
type PlannerStats struct {
	// Plans is the number of policies computed.
	Plans int `json:"plans"`
	// LPFallbacks counts infeasible post-processing LPs (N̂(s,a) < −E/4, spec pitfall 9).
	LPFallbacks int `json:"lp_fallbacks"`
}

// DPUCBVI is the planner of DP-UCBVI (Qiao & Wang, Algorithm 1): post-processing of the noisy
// counts (eq. (4)–(5): LP projection, then the shift E/(2S) per next state), private estimates
// P̃, r̃ (eq. (1)), and optimistic value iteration with the bonus of line 7 (= eq. (31)):
//
//	for h = H..1: Q̃_h(s,a) = min(Q̃^{k−1}_h(s,a), H, r̃ + P̃·Ṽ_{h+1} + b_h(s,a)),
//	              Ṽ_h(s) = max_a Q̃_h(s,a), π_h(s) = argmax_a Q̃_h(s,a)
//
// With the Identity privatizer (E = 0) it is UCBVI with the same bonus (spec §5.1).
//
// A terminal state s_h (public structure, terminal.go) is not learned: Q̃_h(s,·) = Ṽ_h(s) =
// TerminalReward·(H−h), its exact value, with no bonus, and it adds no correction term to the
// pairs that lead to it (g = 0 at a terminal next state: its value has no estimation error).
type DPUCBVI struct {
	S, A, H int
	cfg     BonusConfig
	term    terminal  // public terminal states (set by New; none for NewDPUCBVI)
	q       []float64 // Q̃^{k−1}_h(s,a); Q̃^0 ≡ H (spec pitfall 7)
	v       []float64 // Ṽ_h(s), (H+1)·S, Ṽ_{H+1} ≡ 0
	nt, nsa []float64 // post-processed Ñ_h(s,a,s'), Ñ_h(s,a)
	nNext   []float64 // Ñ_h(s) = Σ_a Ñ_h(s,a)
	g       []float64 // g(Ñ_{h+1}(s')) for the current h
	proj    *Projector
	tie     *rand.Rand
	ties    []int
	stats   PlannerStats
}

// NewDPUCBVI returns the planner; cfg must be resolved (BonusConfig.Resolve). tie is the
// agent's tie-breaking stream.
func NewDPUCBVI(S, A, H int, cfg BonusConfig, tie *rand.Rand) *DPUCBVI {
	p := &DPUCBVI{S: S, A: A, H: H, cfg: cfg, tie: tie,
		q: make([]float64, H*S*A), v: make([]float64, (H+1)*S),
		nt: make([]float64, H*S*A*S), nsa: make([]float64, H*S*A), nNext: make([]float64, H*S),
		g: make([]float64, S), proj: NewProjector(S), ties: make([]int, 0, A)}
	for i := range p.q {
		p.q[i] = float64(H)
	}
	return p
}

// Diagnostics implements Planner.
func (p *DPUCBVI) Diagnostics() PlannerStats { return p.stats }

// postProcess computes Ñ from the billboard (eq. (4)–(5), spec §3.5–3.6). With E = 0 the counts
// are exact and used as they are.
func (p *DPUCBVI) postProcess(b *Billboard) {
	S := p.S
	if b.E == 0 {
		copy(p.nt, b.NT)
		copy(p.nsa, b.N)
	} else {
		shift := b.E / (2 * float64(S))
		for i := range p.nsa {
			x := p.nt[i*S : (i+1)*S]
			if _, fb := p.proj.Project(x, b.NT[i*S:(i+1)*S], b.N[i], b.E/4); fb {
				p.stats.LPFallbacks++
			}
			sum := 0.0
			for j := range x {
				x[j] += shift
				sum += x[j]
			}
			p.nsa[i] = sum // Ñ(s,a) = Σ_{s'} Ñ(s,a,s'), never N̂(s,a) (spec pitfall 11)
		}
	}
	for h := 0; h < p.H; h++ {
		for s := 0; s < S; s++ {
			x := 0.0
			for a := 0; a < p.A; a++ {
				x += p.nsa[(h*S+s)*p.A+a]
			}
			p.nNext[h*S+s] = x
		}
	}
}

// Plan implements Planner.
func (p *DPUCBVI) Plan(b *Billboard, pol *model.Policy) error {
	if err := b.check(p.S, p.A, p.H); err != nil {
		return err
	}
	if err := finiteBillboard(b); err != nil {
		return err
	}
	p.postProcess(b)
	S, A, H := p.S, p.A, p.H
	Hf := float64(H)
	c := &p.cfg
	iota := c.Iota
	E := b.E
	sqrtIota := math.Sqrt(iota)
	cc2 := c.CorrConst * c.CorrConst
	fS, fA := float64(S), float64(A)
	gA := cc2 * Hf * Hf * Hf * fS * fA * iota * iota
	gB := cc2 * Hf * Hf * Hf * Hf * fS * fS * fS * fS * fA * fA * E * E * iota * iota * iota * iota
	gC := cc2 * math.Pow(Hf, 6) * fS * fS * fS * fS * fA * fA * iota * iota * iota * iota
	vAll := p.v
	clear(vAll[H*S:])
	for h := H - 1; h >= 0; h-- {
		next := vAll[(h+1)*S : (h+2)*S]
		term4 := c.C4 > 0 && h < H-1 // Ṽ_{H+1} = V*_{H+1}: term4 := 0 at the last step (pitfall 8)
		if term4 {
			for s2 := 0; s2 < S; s2++ {
				m := p.nNext[(h+1)*S+s2]
				if p.term.is(s2) {
					p.g[s2] = 0 // the exact value: no estimation error to correct
					continue
				}
				if m <= 0 {
					p.g[s2] = Hf * Hf
					continue
				}
				p.g[s2] = min(gA/m+(gB+gC)/(m*m), Hf*Hf)
			}
		}
		for s := 0; s < S; s++ {
			if p.term.is(s) {
				setTerminal(p.q[(h*S+s)*A:(h*S+s+1)*A], vAll[h*S+s:], pol.Act[h], s, p.term.value(H, h))
				continue
			}
			best := math.Inf(-1)
			for a := 0; a < A; a++ {
				i := (h*S+s)*A + a
				n := p.nsa[i]
				q := Hf
				if n > 0 {
					pt := p.nt[i*S : (i+1)*S]
					inv := 1 / n
					m := 0.0
					for s2, x := range pt {
						m += x * next[s2]
					}
					m *= inv
					v := 0.0
					for s2, x := range pt {
						d := next[s2] - m
						v += x * d * d
					}
					v = max(v*inv, 0) // centred form, never negative (pitfall 23)
					r := min(max(b.R[i]*inv, 0), 1)
					stat := c.C1*math.Sqrt(v*iota*inv) + c.C2*math.Sqrt(iota*inv)
					if term4 {
						x := 0.0
						for s2, y := range pt {
							x += y * p.g[s2]
						}
						stat += c.C4 * 4 * sqrtIota * math.Sqrt(x*inv*inv)
					}
					bonus := c.Multiplier * (c.Scale*stat + c.C3*E*inv)
					q = min(r+m+bonus, Hf)
				}
				if c.MinPrev {
					q = min(q, p.q[i])
				}
				p.q[i] = q
				if q > best {
					best = q
				}
			}
			vAll[h*S+s] = best
			if pol.Act[h][s] = p.breakTie(h, s, best); pol.Act[h][s] < 0 {
				return errNoAction
			}
		}
	}
	p.stats.Plans++
	return nil
}

// breakTie picks uniformly among the actions within TieTol of the best value, drawing from the
// tie stream only when there is a tie.
func (p *DPUCBVI) breakTie(h, s int, best float64) int {
	return breakTie(p.q[(h*p.S+s)*p.A:(h*p.S+s+1)*p.A], best, p.cfg.TieTol, p.tie, &p.ties)
}

// breakTie is the tie-break of the tabular planners: a uniform choice, from r, among the
// actions whose value in q is within tol of best. It returns −1 when there is none (best or
// every value NaN): the caller returns errNoAction.
func breakTie(q []float64, best, tol float64, r *rand.Rand, buf *[]int) int {
	t := (*buf)[:0]
	for a, v := range q {
		if v >= best-tol {
			t = append(t, a)
		}
	}
	*buf = t
	if len(t) == 1 {
		return t[0]
	}
	if len(t) == 0 {
		return -1
	}
	return t[r.IntN(len(t))]
}
