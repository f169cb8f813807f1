package linmix

import (
	"github.com/dprl/dprl/internal/smallmat"
	"math"
	"math/rand/v2"

	model "github.com/dprl/dprl/model/linmix"
)

// planner computes a user's policy from the Billboard alone (and the public model features ψ,
// known rewards r or reward features ϕ, and the public confidence widths). It is the only
// consumer of released statistics; by construction it cannot read raw data. Its persistent
// state (the PO logits, the tie stream) is a function of past billboards and public
// randomness only, so the billboard lemma applies ([L] F.7, [Z] §6.2).
type planner struct {
	m          *model.MDP
	alg        Algorithm
	H, S, A, d int
	d2         int
	beta       []float64 // fixed widths (after BetaMult): VTR: [β]; Zhou: [β_p, β_r]
	plus       *PlusConstants
	betaMult   float64
	fixedBeta  float64
	ties       *rand.Rand
	v          [][]float64 // [h][s], h = 0..H; V_H ≡ 0
	q          []float64   // Q_h(s,·) scratch
	qAll       []float64   // [h*S*A + s*A + a] the episode's Q table
	x, x2, tmp []float64
	pol        model.Policy
	logits     []float64 // PO only
	eta        float64
	k          int
	// diagnostics
	saturated, cells int64
	// for UCRL-VTR+: widths of the current episode
	bCheck, bHat, bTilde float64
}

func newPlanner(m *model.MDP, cfg *Config, ties *rand.Rand) *planner {
	p := &planner{m: m, alg: cfg.Algorithm, H: m.Horizon(), S: m.NumStates(), A: m.NumActions(), d: m.Dim(), d2: m.RewardDim(),
		betaMult: cfg.BetaMult, fixedBeta: cfg.knobs.betaFixed, ties: ties}
	p.v = make([][]float64, p.H+1)
	for h := range p.v {
		p.v[h] = make([]float64, p.S)
	}
	p.q = make([]float64, p.A)
	p.qAll = make([]float64, p.H*p.S*p.A)
	p.x = make([]float64, p.d)
	p.x2 = make([]float64, p.d)
	p.tmp = make([]float64, max(p.d, p.d2))
	p.pol = m.NewPolicy()
	if p.alg == LinOptPO {
		p.logits = make([]float64, p.H*p.S*p.A)
		p.pol.Prob = make([]float64, p.H*p.S*p.A)
		// η = sqrt(2 log|A| / (H²K)) ([Z] §8, spec §5.4).
		p.eta = math.Sqrt(2 * math.Log(float64(p.A)) / (float64(p.H) * float64(p.H) * float64(cfg.Episodes)))
	}
	return p
}

// capOf returns the Q cap at step h (0-based): H for Luyo's algorithms, H − h (= H − h' + 1
// for 1-based h') for Zhou's (spec P24).
func (p *planner) capOf(h int) float64 {
	if p.alg == LinOptVI || p.alg == LinOptPO {
		return float64(p.H - h)
	}
	return float64(p.H)
}

// plan fills p.pol, p.v and p.qAll for the episode the billboard is broadcast for.
func (p *planner) plan(bb *Billboard) {
	p.k = bb.k
	if p.alg == UCRLVTRPlus {
		p.bCheck, p.bHat, p.bTilde = p.plus.Betas(p.k)
		if p.fixedBeta > 0 {
			p.bCheck, p.bHat, p.bTilde = p.fixedBeta, p.fixedBeta, p.fixedBeta
		}
		p.bCheck *= p.betaMult
		p.bHat *= p.betaMult
		p.bTilde *= p.betaMult
	}
	if p.alg == LinOptPO {
		p.policyFromLogits()
	}
	for h := p.H - 1; h >= 0; h-- {
		next := p.v[h+1]
		cp := p.capOf(h)
		for s := 0; s < p.S; s++ {
			for a := 0; a < p.A; a++ {
				var q float64
				switch p.alg {
				case UCRLVTR:
					q = p.qVTR(bb, h, s, a, next, p.beta[0])
				case UCRLVTRPlus:
					q = p.qVTR(bb, h, s, a, next, p.bHat)
				default:
					q = p.qLinOpt(bb, h, s, a, next)
				}
				q = min(cp, max(0, q)) // Q clipped to [0, cap] (spec P3(a), P24)
				p.q[a] = q
				p.qAll[(h*p.S+s)*p.A+a] = q
			}
			if p.alg == LinOptPO {
				p.v[h][s] = p.expectPO(h, s)
			} else {
				p.v[h][s] = p.greedy(h, s)
			}
			p.cells++
			if p.v[h][s] >= cp-1e-12*cp && maxOf(p.q) >= cp-1e-12*cp {
				p.saturated++
			}
		}
	}
	if p.alg == LinOptPO {
		p.updateLogits()
	}
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// argmaxTies returns an argmax of q, ties (within 1e-12·max(1,|Q|)) broken uniformly at random
// from the tie stream ties (spec P6), and the max.
func argmaxTies(q []float64, ties *rand.Rand) (pick int, best float64) {
	best = maxOf(q)
	tol := 1e-12 * max(1, math.Abs(best))
	n := 0
	for a, v := range q {
		if v >= best-tol {
			n++
			if n == 1 || ties.IntN(n) == 0 {
				pick = a
			}
		}
	}
	return pick, best
}

// greedy sets π_h(s) to an argmax of p.q, ties broken from the planner's own tie stream
// (argmaxTies), and returns the max.
func (p *planner) greedy(h, s int) float64 {
	pick, best := argmaxTies(p.q, p.ties)
	p.pol.Act[h*p.S+s] = pick
	return best
}

// bonus returns β·‖x‖_{Λ⁻¹} and ⟨x, w̃⟩ for regression r at step h.
func (p *planner) meanBonus(bb *Billboard, h, r int, x []float64, beta float64) (mean, bonus float64) {
	L, w := bb.factor(h, r)
	d := len(x)
	return dot(x, w), beta * math.Sqrt(smallmat.InvQuad(L, d, x, p.tmp))
}
