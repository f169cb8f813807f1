package counter

import (
	"testing"

	"github.com/dprl/dprl/privacy/noise"
)

// TestNodesPerElementIsMaxReleasedNodes checks the number every tree calibration is built on
// (privacy spec §3.1): NodesPerElement must be the largest number of released nodes that
// contain one element over the counter's whole life. The released nodes of the binary
// mechanism are the dyadic blocks (j·2^i, (j+1)·2^i] that complete by time tMax; they are
// enumerated here by brute force, independently of Levels and Touches. A tree that
// under-reports this (e.g. 1, or one level fewer) makes its callers under-calibrate.
func TestNodesPerElementIsMaxReleasedNodes(t *testing.T) {
	for tMax := 1; tMax <= 130; tMax++ {
		counts := make([]int, tMax+1) // counts[s]: released nodes containing element s
		for w := 1; w <= tMax; w *= 2 {
			for end := w; end <= tMax; end += w {
				for s := end - w + 1; s <= end; s++ {
					counts[s]++
				}
			}
		}
		want := 0
		for _, c := range counts {
			want = max(want, c)
		}
		for _, node := range []noise.Calibration{{}, noise.LaplaceNoise(1), noise.GaussianNoise(1)} {
			tr, err := NewTree(TreeConfig{Dim: 1, Capacity: tMax, Node: node}, noise.NewSecureFromKey([32]byte{1}))
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.NodesPerElement(); got != want {
				t.Fatalf("capacity %d, %s nodes: NodesPerElement = %d, want %d (max released nodes containing one element)", tMax, node, got, want)
			}
		}
	}
}
