package linmix

import (
	"fmt"
	"math/bits"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// noiseTree is the binary mechanism of the linear-mixture spec §3.6 for one statistic, in one
// of two forms fixed at construction from the (public) kind of noise source:
//
//   - Secure source (deployment): a privacy/counter.Tree over the statistic's elements. Each
//     node is released as its exact sum rounded to the grid of the node's noise plus grid noise
//     (practical-privacy spec §7), and the released statistic is the sum of the released nodes,
//     so it lies on the grid and is a post-processing of the node releases. The rounding adds
//     at most γ per changed coordinate to a node's sensitivity: with the Gaussian grid
//     γ ≤ 2^-29·σ the tree's μ grows by at most √(K0·n)·2^-29 (n the number of coordinates, see
//     noise.RoundingSlackL2), which the ledger's entries include (Agent.ledgerReport,
//     secureGrid; Constants.GridSlack states the relative increase).
//   - Seeded source (reproducible simulations): a noise-only tree. The released prefix over
//     leaves 1..k is the exact prefix sum plus the sum of the node noises covering [1..k], which
//     are exactly the live nodes level[i] for the set bits i of k; memory O(K0·m), each release
//     O(K0·m). It is distributionally identical to the Chan et al. / Shariff–Sheffet
//     construction, but exact float sums plus float noise are not protected against
//     floating-point attacks — which is why it is never used with a Secure source.
//
// In both forms each node's noise is drawn once, when the node completes, and reused by every
// prefix containing it.
type noiseTree struct {
	m      int
	level  [][]float64
	scales []float64 // per-coordinate multiplier of the calibration's scale (nil = 1)
	cal    noise.Calibration
	src    noise.Source
	k      int
	sum    []float64     // noise-only form: Σ of the live node noises covering [1..k]
	grid   *counter.Tree // Secure form: the released statistic is grid.Prefix()
	redraw bool          // broken variant for the audit: redraw all live nodes at every release
}

func newNoiseTree(m, K int, cal noise.Calibration, scales []float64, src noise.Source) (*noiseTree, error) {
	t := &noiseTree{m: m, cal: cal, scales: scales, src: src, sum: make([]float64, m)}
	if !cal.Off() && src != nil && src.Secure() {
		g, err := counter.NewTree(counter.TreeConfig{Dim: m, Capacity: max(K, 1), Node: cal, CoordScale: scales}, src)
		if err != nil {
			return nil, fmt.Errorf("linmix: %w", err)
		}
		t.grid = g
		return t, nil
	}
	t.level = make([][]float64, bits.Len(uint(max(K, 1)))+1)
	for i := range t.level {
		t.level[i] = make([]float64, m)
	}
	return t, nil
}

// onGrid reports whether the tree releases grid statistics (Secure form): the caller must then
// release released() instead of exact sums plus sum.
func (t *noiseTree) onGrid() bool { return t.grid != nil }

// released returns the released statistic of the Secure form (nil for the noise-only form).
func (t *noiseTree) released() []float64 {
	if t.grid == nil {
		return nil
	}
	return t.grid.Prefix()
}

func (t *noiseTree) draw(v []float64) {
	clear(v)
	if t.cal.Off() {
		return
	}
	for i := range v {
		mult := 1.0
		if t.scales != nil {
			mult = t.scales[i]
		}
		v[i] = t.cal.Add(0, mult, t.src)
	}
}

// append registers leaf k = t.k+1 (1-based) with element leaf (used by the Secure form only;
// it may be nil for the noise-only form): the node (k−2^i, k] completes at level
// i = trailing zeros of k and gets fresh noise; then the prefix noise is re-summed.
func (t *noiseTree) append(leaf []float64) error {
	t.k++
	if t.grid != nil {
		return t.grid.Insert(leaf)
	}
	i := bits.TrailingZeros(uint(t.k))
	t.draw(t.level[i])
	if t.redraw {
		for j := range t.level {
			if t.k>>j&1 == 1 {
				t.draw(t.level[j])
			}
		}
	}
	clear(t.sum)
	for j := range t.level {
		if t.k>>j&1 == 1 {
			for c, v := range t.level[j] {
				t.sum[c] += v
			}
		}
	}
	return nil
}

// nodesInPrefix returns popcount(k), the number of nodes in the current prefix.
func (t *noiseTree) nodesInPrefix() int { return bits.OnesCount(uint(t.k)) }
