package counter_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// The binary mechanism releasing a running count: each node's noise is drawn once and reused
// by every prefix containing it; an element enters at most Levels(T) released nodes.
func ExampleTree() {
	src := noise.NewSeeded(rand.New(rand.NewPCG(1, 2)))
	c, _ := counter.NewTree(counter.TreeConfig{Dim: 1, Capacity: 8, Node: noise.LaplaceNoise(0)}, src)
	for _, x := range []float64{1, 0, 1, 1, 0} {
		_ = c.Insert([]float64{x})
		fmt.Print(c.Prefix()[0], " (", c.NodesInPrefix(), " nodes) ")
	}
	fmt.Println("\nnodes per element:", c.NodesPerElement())
	// Output:
	// 1 (1 nodes) 1 (1 nodes) 2 (2 nodes) 3 (1 nodes) 3 (2 nodes)
	// nodes per element: 4
}
