// Package linmix implements exploration agents for linear mixture MDPs with and without
// differential privacy (linear-mixture spec):
//
//   - UCRL-VTR (non-private baseline) and privacy-preserving UCRL-VTR, Luyo et al. Alg. 1:
//     JDP with Gaussian binary-tree noise on the Gram matrix and the target vector (Cor. 5),
//     LDP with Gaussian noise added on the user's side (Cor. 6), the pure-DP Laplace variant
//     of Remark 1 with constants derived in the spec (§3.5 [D]) and a zCDP calibration valid
//     for every ε (spec P7 [D]) — ucrlvtr.go;
//   - privacy-preserving UCRL-VTR+ (Alg. 3, variance-aware), as reconstructed in the spec §4
//     — ucrlvtrplus.go;
//   - Zhou's Private-LinOpt-VI and Private-LinOpt-PO with changing regularizers (the tree noise
//     plus a 2Σ·I shift) and four binary counters per step, JDP, and the LDP version derived in
//     the spec §5.7 — linoptvi.go, linoptpo.go.
//
// Trust boundary. Every statistic is clipped by a privacy guard before it leaves the user
// (stats.go: guard), so sensitivities hold unconditionally; Q is clipped to [0, cap]. A
// planner reads only a Billboard (released factors and estimates). The JDP curator's only
// output is the Billboard; the LDP server accepts only *Report values, whose fields are
// unexported and which only the user-side Randomizer can produce. Noise levels, shifts and
// confidence widths are fixed from public parameters (constants.go) before any data; the
// multipliers BetaMult (c_β) and ShiftMult (c_shift) never touch a noise level, and the
// positive-definiteness repair (eigenvalue clamp of a released matrix) is post-processing.
// Every agent follows the contract of package protocol (protocol.go): the curator publishes
// the planned policy, the user reports her raw leaves (*protocol.Leaves, to a trusted
// curator) or her privatised report (*protocol.Privatized, the only input of a LocalCurator),
// checked at the boundary before any statistic changes.
//
// Randomness: NewSeeded derives every stream from one rng.Seed (users/k, ties, one stream per
// tree, the users' randomisers); New uses the hardened noise.Secure source for all noise.
package linmix
