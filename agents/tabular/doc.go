// Package tabular implements private and non-private optimistic value iteration for tabular
// episodic MDPs: UCBVI, DP-UCBVI (Qiao & Wang 2023, "Near-Optimal Differentially Private
// Reinforcement Learning", Algorithm 1) with its Central (ε-JDP) and Local (ε-LDP) privatizers,
// and a reconstruction of Private-UCB-VI (Chowdhury & Zhou 2021).
//
// # The trust boundary
//
// Every agent is split into a Client, which runs on the user's side and turns her trajectory
// into the Message she sends, and a Server, which receives messages and releases policies.
//
//   - JDP (Central privatizer): the client sends the raw trajectory to a trusted curator. The
//     curator feeds it into binary-mechanism counters; only their noisy prefix sums — the
//     Billboard — leave the curator. The planner's only input is a *Billboard, so every policy
//     is post-processing of an ε-DP release, and the actions given to other users are ε-JDP
//     (billboard lemma, Hsu et al. 2016).
//   - LDP (Local privatizer): the client perturbs her own indicators with Laplace noise and
//     sends only a *Report; the LocalServer type has no method or field that accepts a raw
//     trajectory.
//
// Noise levels are fixed in the constructors from public parameters (ε, H, S, A, K and the
// calibration) before any data is seen.
//
// # Algorithms
//
//   - dpucbvi.go: Algorithm 1 (optimistic value iteration with the Bernstein-type private
//     bonus of Alg. 1 line 7 = eq. (31)); UCBVI is Algorithm 1 with the Identity privatizer
//     (tabular spec §5.1).
//   - central.go: Central privatizer (§5.1): Laplace binary mechanism on N_h(s,a), N_h(s,a,s'),
//     R_h(s,a) with ε' = ε/(3H·L), followed by the post-processing LP of eq. (4)–(5)
//     (projectcounts.go) in the planner.
//   - local.go: Local privatizer (§5.2): Laplace(3H/ε) per entry on the user's side.
//   - privateucbvi.go: Private-UCB-VI [RECONSTRUCTED], Hoeffding bonus on the noisy counts used
//     directly, no LP.
package tabular
