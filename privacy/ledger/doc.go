// Package ledger is dprl's one privacy ledger: every noisy mechanism an agent uses is
// registered here, with its public parameters, before any data is seen; the ledger calibrates
// the noise for the agent's target (ε, δ), composes the registered mechanisms and produces the
// one privacy report type (Report) that agents, summaries, manifests and the auditor print.
// No agent computes its own ε.
//
// An Entry states, for one mechanism: its kind (a Gaussian continual counter, a one-shot
// Gaussian release such as an LDP report, a Laplace release), its calibration (σ, or the
// Laplace scale b), the sensitivity Δ of one user's contribution with its norm (ℓ2 or ℓ1) and
// neighbouring relation, the counter's sensitivity factor (max_j ‖C e_j‖ of its encoder; 1
// for a one-shot release), the number of releases and the noise std of the last release, and,
// with the Secure source, the grid terms: the rounding of the statistic to the noise grid γ
// adds Grid.Weight·γ to Δ (√dim·γ for unit coordinate scales; practical-privacy spec §7,
// counter.SecureSensitivity), and a real-valued factorisation counter adds
// counter.SecureReleaseSlack to μ (docs/privacy.md §1). Each entry's guarantee is
//
//	Gaussian (ℓ2):   μᵢ = (Δ + W·γ(σ·m))·factor/σ + slack        μ-GDP (Dong, Roth & Su 2022, Thm 2.7)
//	Gaussian (zCDP): ρᵢ = ((Δ + W·γ)·factor/σ)²/2                ρ-zCDP (Bun & Steinke 2016, Prop. 1.6)
//	Laplace (ℓ1):    εᵢ = (Δ + W·γ_L(b·m))·factor/b              pure ε-DP (Dwork et al. 2006)
//
// and the ledger composes them (adaptively chosen or not): μ = √Σμᵢ² when every entry is
// μ-GDP (exact; Dong, Roth & Su 2022, Cor. 3.3), ε = Σεᵢ when every entry is pure, otherwise
// ρ = Σρᵢ after converting μ-GDP to μ²/2-zCDP and ε-DP to ε²/2-zCDP. The report converts the
// composed guarantee to (ε, δ) at the target δ with the accounting package (GDP.ToApproxDP,
// exact; ZCDP.ToApproxDP, Bun & Steinke Lemma 3.5; pure ε unchanged) and states whether it
// meets the nominal ε (PrivateAtNominal).
//
// Calibration (Ledger.Calibrate, GaussianSigma): the target's μ = accounting.GDPFor(ε, δ)
// (split equally, μ/√n, over n Gaussian entries) less the entry's release slack, and the
// smallest σ with (Δ + W·γ(σ·m))·factor/σ ≤ μ − slack, found by the fixed point that only
// raises σ (γ is a step function of σ). For a seeded source (no grid) this is Δ·factor/μ
// rounded up to the first float that meets μ, the value every practical agent used before the
// ledger, so seeded reproductions are byte-identical.
//
// The package lives under privacy/ next to accounting and counter, and imports both: it needs
// the counters' public parameters (CounterParams: factor, rounding gain, release slack) and the
// accountant's conversions, and accounting stays below counter (it knows nothing of counters).
// It knows nothing of reinforcement learning.
package ledger
