package tabular

import (
	"math"
	"math/rand/v2"

	model "github.com/dprl/dprl/model/tabular"
)

// PrivateUCBVI is the planner of Private-UCB-VI (Chowdhury & Zhou 2021, their Alg. 2), the
// Hoeffding-bonus predecessor that DP-UCBVI improves on. [RECONSTRUCTED] Qiao & Wang give only
// its outline (tabular spec §6): UCBVI with "bonus 1" fed by the privatizers' noisy counts used
// directly, without the LP post-processing. What is implemented here:
//
//	n⁺ = max(1, N̂_h(s,a) + E)                          (noisy count, inflated by E so that it
//	                                                     never underestimates N w.h.p.)
//	r̃ = clip(R̃_h(s,a)/n⁺, 0, 1)
//	P̃(s') = N̂_h(s,a,s')/n⁺                             (not a distribution: entries may be
//	                                                     negative and need not sum to 1)
//	b = Multiplier·( Scale·C2·(H+1)·√(ι/n⁺) + C3·E/n⁺ ),   theory C2 = √2, C3 = 2 + 2H + S·H
//	Q̃_h(s,a) = clip(r̃ + P̃·Ṽ_{h+1} + b, 0, H)  (and min with Q̃^{k−1} when MinPrev)
//
// The practical preset also values the missing mass (1 − Σ P̃)₊ at H (BonusConfig.OptimisticMass).
//
// The Hoeffding term (H+1)·√(2ι/n) bounds the reward and value-estimation errors; the privacy
// term bounds |r̃ − R/N| ≤ 2E/n and |(P̃ − P̂)·V| ≤ (S·H + 2H)·E/n for values in [0, H] when
// every noisy count is within E of the truth. With E = 0 and N = 0 the pair is unvisited and
// Q̃ = H. The constants are ours; the structure (noisy counts used directly, E added to the
// denominator, Hoeffding bonus plus an E/n privacy term) is what Qiao & Wang describe.
//
// A terminal state s_h (terminal.go) has Q̃_h(s,·) = Ṽ_h(s) = TerminalReward·(H−h) exactly, no
// bonus.
type PrivateUCBVI struct {
	S, A, H int
	cfg     BonusConfig
	term    terminal // public terminal states (set by New; none for NewPrivateUCBVI)
	q       []float64
	v       []float64
	tie     *rand.Rand
	ties    []int
	stats   PlannerStats
}

// NewPrivateUCBVI returns the planner; cfg must be resolved.
func NewPrivateUCBVI(S, A, H int, cfg BonusConfig, tie *rand.Rand) *PrivateUCBVI {
	p := &PrivateUCBVI{S: S, A: A, H: H, cfg: cfg, tie: tie,
		q: make([]float64, H*S*A), v: make([]float64, (H+1)*S), ties: make([]int, 0, A)}
	for i := range p.q {
		p.q[i] = float64(H)
	}
	return p
}

// Diagnostics implements Planner.
func (p *PrivateUCBVI) Diagnostics() PlannerStats { return p.stats }

// Plan implements Planner.
func (p *PrivateUCBVI) Plan(b *Billboard, pol *model.Policy) error {
	if err := b.check(p.S, p.A, p.H); err != nil {
		return err
	}
	if err := finiteBillboard(b); err != nil {
		return err
	}
	S, A, H := p.S, p.A, p.H
	Hf := float64(H)
	c := &p.cfg
	E := b.E
	hoeff := c.Scale * c.C2 * (Hf + 1)
	clear(p.v[H*S:])
	for h := H - 1; h >= 0; h-- {
		next := p.v[(h+1)*S : (h+2)*S]
		for s := 0; s < S; s++ {
			if p.term.is(s) {
				setTerminal(p.q[(h*S+s)*A:(h*S+s+1)*A], p.v[h*S+s:], pol.Act[h], s, p.term.value(H, h))
				continue
			}
			best := math.Inf(-1)
			for a := 0; a < A; a++ {
				i := (h*S+s)*A + a
				q := Hf
				if E > 0 || b.N[i] > 0 {
					n := max(1, b.N[i]+E)
					inv := 1 / n
					m, mass := 0.0, 0.0
					for s2, x := range b.NT[i*S : (i+1)*S] {
						m += x * next[s2]
						mass += x
					}
					if c.OptimisticMass && mass < n {
						m += (n - mass) * Hf
					}
					r := min(max(b.R[i]*inv, 0), 1)
					bonus := c.Multiplier * (hoeff*math.Sqrt(c.Iota*inv) + c.C3*E*inv)
					q = min(max(r+m*inv+bonus, 0), Hf)
				}
				if c.MinPrev {
					q = min(q, p.q[i])
				}
				p.q[i] = q
				if q > best {
					best = q
				}
			}
			p.v[h*S+s] = best
			if pol.Act[h][s] = breakTie(p.q[(h*S+s)*A:(h*S+s+1)*A], best, c.TieTol, p.tie, &p.ties); pol.Act[h][s] < 0 {
				return errNoAction
			}
		}
	}
	p.stats.Plans++
	return nil
}
