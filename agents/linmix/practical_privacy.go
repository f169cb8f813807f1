package linmix

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"

	"github.com/dprl/dprl/agents/internal/agentkit"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// PracticalLabel marks every output of dprl's own practical linear-mixture agents: they are
// not from the seed papers and carry no regret proof (practical-privacy spec §5).
const PracticalLabel = "practical (dprl's own, no regret proof)"

// PracticalHomogeneity is the assumption a practical agent makes and prints: it pools the
// regression over h, so its estimate is right only if w_h = w for every h.
const PracticalHomogeneity = "ASSUMPTION: time-homogeneous mixture weights (w_h = w for every h); " +
	"the value-targeted regression is pooled over h"

// PracticalPrivacy is the privacy setting of a practical agent. Every field is public: the noise
// level is fixed from them (and the counter's sensitivity factor) before any data is seen.
type PracticalPrivacy struct {
	// Mode is JDP (trusted curator, Gaussian continual counter), LDP (Gaussian noise added by
	// the user from her own stream) or None (exact statistics: the noise-off twin).
	Mode Mode
	// Epsilon and Delta are the target (ε, δ) under replace-one neighbours.
	Epsilon, Delta float64
	// BatchEvery M ≥ 1: the statistics are released after users 1, 2, 4, …, then every M
	// users (a data-independent schedule, practical-privacy spec §4). Default 1.
	BatchEvery int
	// Counter names the JDP continual counter: blt (default), tree or honaker.
	Counter string
	// Clip ∈ (0, 1] scales the public feature bound B₁ (PracticalFeatureBound) to the
	// clipping radius B = Clip·B₁ of every normalised regressor (default 1: no clipping when
	// the model's assumptions hold; < 1 clips, which biases but never breaks privacy).
	Clip float64
	// Budget ∈ (0, 1] caps each user's trace Σ_h ‖X_h‖² at T = Budget·(H−1)·B²: her steps are
	// kept in order while the running trace stays ≤ T (default 1: every step kept). The keep
	// decision for step h depends on X_h and earlier steps only, never on y_h, so the kept
	// leaves are still valid regression observations (a predictable selection).
	Budget float64
}

func (p *PracticalPrivacy) defaults() {
	p.BatchEvery = cmp.Or(p.BatchEvery, 1)
	p.Counter = cmp.Or(p.Counter, "blt")
	p.Clip = cmp.Or(p.Clip, 1)
	p.Budget = cmp.Or(p.Budget, 1)
	if p.Mode != None && p.Delta == 0 {
		p.Delta = 1e-5
	}
}

// Validate checks the setting (after defaults); errors name the field and its range.
func (p PracticalPrivacy) Validate() error {
	err := agentkit.CheckTrust(p.Mode, p.Epsilon, p.Delta, "privacy.mode: %d unknown (none, jdp, ldp)",
		"privacy.epsilon: %v, want a finite number > 0", "privacy.delta: %v, want (0, 1)")
	if err != nil {
		return err
	}
	if p.BatchEvery < 1 || p.BatchEvery > 1<<30 {
		return fmt.Errorf("privacy.batch_every: %d, want 1..%d", p.BatchEvery, 1<<30)
	}
	if !(p.Clip > 0 && p.Clip <= 1) {
		return fmt.Errorf("privacy.clip: %v, want (0, 1]", p.Clip)
	}
	if !(p.Budget > 0 && p.Budget <= 1) {
		return fmt.Errorf("privacy.budget: %v, want (0, 1]", p.Budget)
	}
	if _, err := counter.NewRegistry().Lookup(p.Counter); err != nil && p.Mode == JDP {
		return err
	}
	return nil
}

// PracticalCounters lists the counter names a practical JDP agent accepts: every kind of the
// one counter registry (counter.NewRegistry; practical-privacy spec §3).
func PracticalCounters() []string { return counter.NewRegistry().Names() }

// PracticalFeatureBound returns B₁ = max_{s,a} max_{v ∈ [−½, ½]^S} ‖Uᵀψ_v(s,a)‖, the public bound
// on a normalised regressor (centred values of range 1, projected onto the directions N of w
// that Σ_{s′} P(s′|s,a) = 1 leaves unknown, U an orthonormal basis of N: practicalKnown).
// ‖Uᵀψ_v‖ is convex in v, so the maximum is attained at a vertex of the cube restricted to the
// support of ψ(·|s,a); the vertices are enumerated (Gray-code order) when the support has at
// most 16 states. Otherwise, and as a cap, the bound 1 of Luyo Asm. 2 is used: ‖Uᵀψ_v‖ ≤ ‖ψ_v‖
// and 2v = a − b with a, b ∈ [0,1]^S, so ‖ψ_v‖ ≤ (1 + 1)/2. The features ψ are public, so B₁
// is a public parameter.
func PracticalFeatureBound(m *model.MDP) float64 {
	S, A := m.NumStates(), m.NumActions()
	kn := newPracticalKnown(m)
	d := kn.dn
	e := make([]float64, S)
	x := make([]float64, d)
	full := make([]float64, m.Dim())
	best := 0.0
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			var rows [][]float64
			for n := 0; n < S; n++ {
				e[n] = 1
				r := make([]float64, d)
				m.PsiV(s, a, e, full)
				kn.reduce(full, r)
				e[n] = 0
				if dot(r, r) > 0 {
					rows = append(rows, r)
				}
			}
			if len(rows) > 16 {
				return 1
			}
			// start at v = −½ on the support
			clear(x)
			for _, r := range rows {
				for j := range x {
					x[j] -= r[j] / 2
				}
			}
			best = max(best, math.Sqrt(dot(x, x)))
			for i := 1; i < 1<<len(rows); i++ {
				k := bits.TrailingZeros(uint(i))
				sign := 1.0
				if (i^(i>>1))>>k&1 == 0 {
					sign = -1
				}
				for j := range x {
					x[j] += sign * rows[k][j]
				}
				best = max(best, math.Sqrt(dot(x, x)))
			}
		}
	}
	return min(best*(1+1e-12), 1)
}

// PracticalSensitivity returns the ℓ2 sensitivity Δ₂ of one user's whole contribution under
// replace-one neighbours, measured in the counter's weighted norm (Gram off-diagonals weighted
// by √2, i.e. the Frobenius norm of the Gram part): with n = H − 1 informative steps,
// clipping radius B and trace cap T = budget·n·B²,
//
//	Δ₂² = 2·T² + n·T,   (budget = 1: Δ₂ = n·B·√(2B² + 1)).
//
// Proof. The contribution is (G, u) with G = Σ_h X_h X_hᵀ and u = Σ_h X_h y_h over the kept
// steps h, ‖X_h‖ ≤ B and |y_h| ≤ ½ after the privacy guard (normalised, centred values), and
// Σ_h ‖X_h‖² ≤ T by the keep rule. G and G′ are PSD, so tr(G G′) ≥ 0 and
// ‖G − G′‖_F² = ‖G‖_F² + ‖G′‖_F² − 2 tr(G G′) ≤ 2T², using ‖G‖_F ≤ tr G = Σ ‖X_h‖² ≤ T.
// ‖u − u′‖ ≤ ‖u‖ + ‖u′‖ ≤ 2·½·Σ_h ‖X_h‖ ≤ √(n·T) (Cauchy–Schwarz over ≤ n kept steps). The
// packed upper triangle of G − G′ with off-diagonals weighted by √2 has ℓ2 norm ‖G − G′‖_F.
// The last step h = H contributes nothing (Ṽ_{H+1} ≡ 0 has range 0) and is not counted. The
// agent enforces n itself: its curator rejects a user with more than H − 1 leaves and its
// LDP randomiser encodes only the first H − 1 (practicalEncoder.leaves).
func PracticalSensitivity(H int, B, budget float64) float64 {
	n := float64(H - 1)
	T := budget * n * B * B
	return math.Sqrt(2*T*T + n*T)
}

// practicalScales returns the per-coordinate noise multipliers of the released vector: packed
// Gram (diagonal 1, off-diagonal 1/√2: noise.Avg) then the target (1).
func practicalScales(d int) []float64 {
	sc := noise.SymScales(d, noise.Avg)
	for i := 0; i < d; i++ {
		sc = append(sc, 1)
	}
	return sc
}

// practicalGrid returns what the Secure source's rounding adds to the sensitivity (practical-
// privacy spec §7): every coordinate of the statistic is rounded to the grid γ of the smallest
// per-coordinate std σ·min c_k and moves by at most γ/2 per side, so in the weighted norm
// ‖diag(c)⁻¹·v‖ the distance grows by at most γ·√(Σ_k 1/c_k²).
func practicalGrid(scales []float64) ledger.Grid {
	mn, w := math.Inf(1), 0.0
	for _, c := range scales {
		mn = min(mn, c)
		w += 1 / (c * c)
	}
	return ledger.Grid{Weight: math.Sqrt(w), Scale: mn}
}

// practicalPublic is what the privacy ledger of a practical agent is built from: public
// parameters only, fixed before any data.
type practicalPublic struct {
	B, T, sens float64 // clipping radius, trace cap, Δ₂ (PracticalSensitivity)
	inputs     map[string]float64
}

// ledger returns the privacy ledger of a practical agent (target (ε, δ) under replace-one
// neighbours, PracticalHomogeneity); the agent registers its counter or report with it and
// takes σ from its calibration.
func (p PracticalPrivacy) ledger() (*ledger.Ledger, error) {
	return ledger.New(ledger.Config{Model: p.Mode.String(), Target: accounting.ApproxDP{Epsilon: p.Epsilon, Delta: p.Delta},
		Assumption: PracticalHomogeneity})
}
