package linmix

import (
	"math/bits"

	"github.com/dprl/dprl/privacy/noise"
)

// noiseTree is the noise-only binary mechanism of the linear-mixture spec §3.6: the released
// prefix over leaves 1..k is the exact prefix sum plus the sum of the node noises covering
// [1..k], which are exactly the live nodes level[i] for the set bits i of k. Each node's noise
// is drawn once, when the node completes, and reused by every prefix containing it; memory
// O(K0·m), each release O(K0·m). This is distributionally identical to the Chan et al. /
// Shariff–Sheffet construction and to privacy/counter.Tree (which also stores the exact sums).
type noiseTree struct {
	m      int
	level  [][]float64
	scales []float64 // per-coordinate multiplier of the calibration's scale (nil = 1)
	cal    noise.Calibration
	src    noise.Source
	k      int
	sum    []float64 // Σ of the live nodes covering [1..k]
	redraw bool      // broken variant for the audit: redraw all live nodes at every release
}

func newNoiseTree(m, K int, cal noise.Calibration, scales []float64, src noise.Source) *noiseTree {
	t := &noiseTree{m: m, cal: cal, scales: scales, src: src, sum: make([]float64, m)}
	t.level = make([][]float64, bits.Len(uint(max(K, 1)))+1)
	for i := range t.level {
		t.level[i] = make([]float64, m)
	}
	return t
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

// append registers leaf k = t.k+1 (1-based): the node (k−2^i, k] completes at level
// i = trailing zeros of k and gets fresh noise; then the prefix noise is re-summed.
func (t *noiseTree) append() {
	t.k++
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
}

// nodesInPrefix returns popcount(k), the number of nodes in the current prefix.
func (t *noiseTree) nodesInPrefix() int { return bits.OnesCount(uint(t.k)) }
