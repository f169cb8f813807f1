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
		fmt.Printf("t=%d prefix=%g nodes=%d\n", c.Len(), c.Prefix()[0], c.NodesInPrefix())
	}
	fmt.Println("nodes per element:", c.NodesPerElement())
	// Output:
	// t=1 prefix=1 nodes=1
	// t=2 prefix=1 nodes=1
	// t=3 prefix=2 nodes=2
	// t=4 prefix=3 nodes=1
	// t=5 prefix=3 nodes=2
	// nodes per element: 4
}
