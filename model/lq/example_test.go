package lq_test

import (
	"fmt"

	"github.com/dprl/dprl/model/lq"
)

// The optimal cost of LQ-E1 from x = (1, 0), the cost of the zero policy, and its regret.
func Example() {
	s := lq.LQE1()
	x := []float64{1, 0}
	zero := make([][]float64, s.H)
	for h := range zero {
		zero[h] = make([]float64, s.D*s.N)
	}
	reg, _ := s.Regret(zero, x)
	fmt.Printf("J* = %.6f, regret of u ≡ 0 = %.6f\n", s.Optimal(x), reg)
	// Output: J* = 2.058719, regret of u ≡ 0 = 0.018462
}
