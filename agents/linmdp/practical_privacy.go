package linmdp

import (
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/privacy/counter"
)

// This file holds the privacy side of dprl's practical linear-MDP agents (practical.go):
// the layout and ℓ2 sensitivity of one user's element, the σ calibration, the accountant's
// report and the Gaussian random-matrix bounds that set the regulariser and the widths.
// "practical (dprl's own, no regret proof)": see practical-privacy spec §2–§5.

// LinHomogeneityAssumption is printed by a pooled practical agent: pooling the statistics
// over h is right only for time-homogeneous linear MDPs (practical-privacy spec §4).
const LinHomogeneityAssumption = "ASSUMPTION: the linear MDP is time-homogeneous (μ_h = μ, θ_h = θ for every h); " +
	"Gram matrices and targets are pooled over h"

// practicalLayout describes one user's element: for each group g (1 if pooled, else H) the
// packed upper triangle of her Gram sum Σ_{h∈g} φ_hφ_hᵀ with off-diagonal entries multiplied
// by √2 (so that its Euclidean norm is the Frobenius norm), her reward-weighted feature sum
// b_g = Σ_{h∈g} φ_h r_h (d) and her next-state feature sums G_g[s'] = Σ_{h∈g: s_{h+1}=s'} φ_h
// (N·d). Every block is divided by its public noise scale before it enters the counter (so
// the counter draws i.i.d. N(0, σ²) noise and block B's noise has std σ·scale_B).
type practicalLayout struct {
	d, n, groups int
	packed       int     // d(d+1)/2
	per          int     // packed + d + n·d
	gramScale    float64 // scale of the Gram block (≥ 1)
	tgtScale     float64 // scale of the b and G blocks (≥ 1)
}

func (l practicalLayout) dim() int { return l.groups * l.per }

// PracticalSensitivity returns the ℓ2 sensitivity Δ₂ of one user's element (in the scaled
// coordinates that enter the counter) under replace-one neighbours.
//
// Claim. Let n_g be the number of steps of group g (pooled: n = H; step-dependent: n_h = 1)
// and M² = Σ_g n_g² (H² pooled, H step-dependent). With ‖φ‖₂ ≤ 1 (enforced: the public
// feature table is projected onto the unit ball) and r ∈ [0, 1] (clipped at the boundary),
//
//	Δ₂² = M²·(κ_Gram/gramScale² + (κ_b + κ_G)/tgtScale²),
//
// with κ_Gram = 2, and κ_b = κ_G = 2 if every entry of every public feature is ≥ 0
// (nonnegFeatures), else 4.
//
// Proof. Gram block: per group the user's matrix A_g = Σ_{h∈g} φ_hφ_hᵀ is PSD with ‖A_g‖_F ≤
// tr A_g ≤ n_g; the scaled packing is an isometry for the Frobenius norm, and the packed inner
// product is tr(A_g A′_g) ≥ 0 (PSD matrices), so ‖A − A′‖² = ‖A‖² + ‖A′‖² − 2⟨A, A′⟩ ≤ 2M².
// b block: ‖b_g‖ ≤ Σ_{h∈g} ‖φ_h‖ r_h ≤ n_g. G block: ‖G_g‖² = Σ_{s′} ‖Σ_{h∈g: s_{h+1}=s′} φ_h‖² ≤
// Σ_{s′} c_{s′}² ≤ n_g² (c_{s′} visits with next state s′, Σ c = n_g). With nonnegative
// features and rewards every coordinate of b and G is ≥ 0, so ⟨x, x′⟩ ≥ 0 and ‖x − x′‖² ≤
// 2 max‖x‖²; otherwise ‖x − x′‖ ≤ ‖x‖ + ‖x′‖ gives 4 max‖x‖². Adding the blocks (each divided
// by its scale) gives the claim. The bound depends only on public quantities (H, the feature
// table, the scales). The agent enforces n_g itself: Observe rejects a second observation of
// a step h in one episode, and a NaN feature is rejected by NewPractical (it would skip the
// projection onto the unit ball).
func PracticalSensitivity(H int, pooled, nonnegFeatures bool, gramScale, tgtScale float64) float64 {
	m2 := float64(H)
	if pooled {
		m2 = float64(H) * float64(H)
	}
	k := 4.0
	if nonnegFeatures {
		k = 2
	}
	return math.Sqrt(m2 * (2/(gramScale*gramScale) + 2*k/(tgtScale*tgtScale)))
}

// gramNoiseBound returns the bound, holding with probability ≥ 1 − beta, on the spectral norm
// of the d×d symmetric noise E of a released Gram matrix whose diagonal entries have std s and
// off-diagonal entries std s/√2 (the scaled packing), all independent:
//
//	‖E‖ ≤ s·(√(2d) + √(2 ln(2/β))).
//
// Derivation. E = (s/√2)·X with X a GOE matrix (off-diagonal N(0,1), diagonal N(0,2)).
// E λ_max(X) ≤ 2√d (Gordon / Sudakov–Fernique comparison; Davidson & Szarek 2001, Handbook of
// the Geometry of Banach Spaces, §2), and λ_max is a √2-Lipschitz function of the underlying
// standard Gaussians (‖X‖_F² = 2‖g‖²), so by Gaussian concentration (Tsirelson–Ibragimov–
// Sudakov) P(λ_max(X) ≥ 2√d + t) ≤ exp(−t²/4); the same for −λ_min. With t = 2√(ln(2/β)),
// P(‖X‖ ≥ 2√d + t) ≤ β. TestGramNoiseBound checks the bound on seeded draws.
func gramNoiseBound(s float64, d int, beta float64) float64 {
	return s * (math.Sqrt(2*float64(d)) + math.Sqrt(2*math.Log(2/beta)))
}

// targetNoiseBound returns the bound, with probability ≥ 1 − beta and UNIFORMLY over the value
// vector v (which may depend on the same released noise), on ‖e_b + E_Gᵀ v‖₂ where e_b ∈ R^d
// and E_G ∈ R^{n×d} have i.i.d. N(0, s²) entries:
//
//	‖e_b + E_Gᵀv‖ ≤ s·(√d + t) + s·(√n + √d + t)·‖v‖₂,   t = √(2 ln(2/β)).
//
// ‖e_b‖ is a 1-Lipschitz function with mean ≤ √d, and ‖E_G‖_op a 1-Lipschitz function with
// mean ≤ √n + √d (Gordon's inequality; Davidson & Szarek 2001); each tail gets β/2.
func targetNoiseBound(s float64, d, n int, beta float64, vnorm float64) float64 {
	t := math.Sqrt(2 * math.Log(2/beta))
	return s*(math.Sqrt(float64(d))+t) + s*(math.Sqrt(float64(n))+math.Sqrt(float64(d))+t)*vnorm
}

// DefaultLinCounter is the continual counter of the practical linear-MDP agents.
const DefaultLinCounter = counter.DefaultKind

// LinPracticalCounters lists the counter names a practical linear-MDP agent accepts: every kind
// of the one counter registry (counter.NewRegistry).
func LinPracticalCounters() []string { return counter.NewRegistry().Names() }

func lookupLinCounter(name string) (counter.Builder, error) {
	return agentkit.CounterBuilder(name, "counter")
}
