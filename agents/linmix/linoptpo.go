package linmix

import "math"

// LinOpt-PO-Reg (Zhou Alg. 2; private instance Private-LinOpt-PO, Def. 6.3; spec §5.4). The
// estimators, bonuses and REGULARIZER are LinOpt-VI's; the policy is a mirror-descent
// (softmax) update:
//
//	π¹_h(·|s) = uniform;  η = sqrt(2 log|A| / (H²K))
//	V^k_h(s) ← Σ_a π^k_h(a|s)·Q^k_h(s,a)          (an expectation, not a max)
//	π^{k+1}_h(a|s) ∝ π^k_h(a|s)·exp(η·Q^k_h(s,a))
//
// The logits L_h(s,a) = η·Σ_j Q^j_h(s,a) are stored and π = softmax(L) is computed with
// max-subtraction (spec P25). The logits are a function of released billboards only.

// policyFromLogits sets π^k = softmax of the logits.
func (p *planner) policyFromLogits() {
	A := p.A
	for i := 0; i < p.H*p.S; i++ {
		l := p.logits[i*A : (i+1)*A]
		pr := p.pol.Prob[i*A : (i+1)*A]
		m := maxOf(l)
		z := 0.0
		for a, v := range l {
			pr[a] = math.Exp(v - m)
			z += pr[a]
		}
		for a := range pr {
			pr[a] /= z
		}
	}
}

// expectPO returns Σ_a π^k_h(a|s)·Q^k_h(s,a).
func (p *planner) expectPO(h, s int) float64 {
	i := h*p.S + s
	pr := p.pol.Prob[i*p.A : (i+1)*p.A]
	return dot(pr, p.q)
}

// updateLogits adds η·Q^k to the logits after episode k's planning.
func (p *planner) updateLogits() {
	for i, q := range p.qAll {
		p.logits[i] += p.eta * q
	}
}
