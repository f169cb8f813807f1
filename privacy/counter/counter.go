// Package counter implements continual release of prefix sums ("continual counters") under
// differential privacy.
//
// A Counter receives a stream of fixed-length vectors x(1), x(2), … (scalars are length-1
// vectors; a symmetric d×d matrix is its packed upper triangle, see noise.PackedLen) and after
// every insertion releases a noisy estimate of S(t) = x(1) + … + x(t). The privacy of the whole
// sequence of releases is determined by two numbers every implementation reports:
// NodesPerElement (how many independent noise draws one element's value enters) and the noise
// calibration of each draw. Callers turn these into a guarantee with package accounting.
//
// Tree is the binary (tree) mechanism of Dwork et al. (2010) and Chan, Shi & Song (2011, Alg. 2).
// The Counter interface lets tighter counters replace it.
//
// Gaussian counters (GaussianCounter, practical-privacy spec §2–§3) release y = A x + B z =
// B (C x + z), z ~ N(0, σ²I), A the prefix-sum matrix; one element of ℓ2 sensitivity Δ costs
// μ = Δ·SensitivityFactor/σ in μ-GDP (Dong, Roth & Su 2022; accounting.GDP, exact δ(ε) of
// Balle & Wang 2018), also for adaptively chosen streams (Denisov et al., NeurIPS 2022), and
// every release has the data-independent noise std StdAt(t) = σ·‖row_t(B)‖. GaussianTree
// (C = node membership, factor √L), HonakerTree (the same nodes with Honaker's online
// estimator, TPDP 2015), SqrtFactorization (C = A^{1/2}, Fichtenberger, Henzinger & Upadhyay,
// ICML 2023; naive O(t) per step) and BLT (buffered linear Toeplitz C fitted to A^{1/2},
// Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024; O(buffers) per step) implement it and
// pass the shared suite of package countertest.
//
// This package knows nothing of reinforcement learning.
package counter

// Counter continually releases noisy prefix sums of a stream of vectors of length Dim.
type Counter interface {
	// Dim is the length of every element.
	Dim() int
	// Capacity is the maximum number of insertions (T_max) the calibration was made for.
	Capacity() int
	// Len is the number of elements inserted so far.
	Len() int
	// Insert appends x to the stream. It returns an error if len(x) != Dim or the counter is
	// full. x is copied; the caller may reuse it.
	Insert(x []float64) error
	// Prefix returns the current noisy prefix sum, exactly 0 before any insertion. The slice is
	// owned by the counter and valid until the next Insert; do not modify it.
	Prefix() []float64
	// NodesInPrefix is the number of independent noise draws summed in Prefix.
	NodesInPrefix() int
	// NodesPerElement bounds the number of released noise draws any one element enters over
	// the counter's whole life (its Capacity insertions).
	NodesPerElement() int
}
