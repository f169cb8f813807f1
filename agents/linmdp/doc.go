// Package linmdp implements LSVI-UCB (Jin et al. 2020) and its two differentially private
// versions for finite-state linear MDPs, following the linear-MDP spec
// (docs/spec/linear_mdp.md):
//
//   - LSVIUCB: the non-private baseline, refitting every episode ([N] eqs. (1)–(5)).
//   - Ngo: Private LSVI-UCB with low switching cost (Ngo, Vietri & Wu 2022, Algorithm 1):
//     binary-mechanism Gaussian noise on the Gram matrices, Gaussian noise on the regression
//     vectors at update episodes, the determinant-ratio switching rule evaluated on the NOISY
//     Gram matrices, a hard update cap, ρ-zCDP accounting. Calibration [S] (spec §3.2,
//     privacy-consistent) is the default; the printed [P] is an option.
//   - Luyo: privacy-preserving batched LSVI-UCB (Luyo et al. 2021, Algorithm 2, App. E.1
//     constants with c_K = d·Υ) with static batches, and its non-batched variant (B = K,
//     Remarks 3 and 7).
//
// Every private agent has a NoiseOff switch (giving LSVI-UCB-RareSwitch and LSVI-UCB-Batch),
// a β multiplier CBeta (1 = theory), the spec's explicit tie-break rule (§2.3), Q clipped to
// [0, H] (pitfall P1) and PSD repair of released matrices (P3, post-processing).
//
// Trust boundary: the curator (unexported types holding raw aggregated statistics) produces
// Release values (noisy Gram matrix and noisy regression vector); the planner builds the
// policy from Releases only. All noise levels, caps and schedules are computed by the
// constructors from public inputs (K, H, d, ε, δ, p) before any data is seen.
//
// Statistics are aggregated over the finite state space (spec §7): y_h = b_h +
// Σ_s G_h[s]·V_{h+1}(s) with b_h = Σ_i φ_h^i r_h^i and G_h[s] = Σ_{i: s_{h+1}^i = s} φ_h^i, so a
// refit costs O(H(NAd² + d³)) independently of the number of episodes.
//
// The Gaussian samplers of the seeded (experiment) noise source are floating-point and not
// side-channel-safe; this is research simulation code. Agents built without an explicit seed
// draw their noise from noise.Secure.
package linmdp
