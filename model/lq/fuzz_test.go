package lq

import (
	"math"
	"os"
	"testing"
)

// FuzzParse: Parse never panics, loops for long or exhausts memory, in YAML or JSON, and
// whatever it accepts satisfies the size limits and Assumption 1 and has a finite,
// non-negative optimal cost.
func FuzzParse(f *testing.F) {
	e1, err := os.ReadFile("testdata/lqe1.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(e1)
	f.Add([]byte(`{"name": "LQ-E1", "A": [[0.6, 0.2], [0.0, 0.5]], "B": [[0.0], [0.4]], "Q": [[1, 0], [0, 1]],
		"R": [[1]], "horizon": 10, "cw": 0.2, "gamma": 0.3, "noise": "rademacher", "initial": "golden"}`))
	f.Add([]byte("A: [[0.5]]\nB: [[0.5]]\nQ: [[2]]\nR: [[1]]\nhorizon: 3\ncw: 0.1\ngamma: 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if err := CheckSize(s.N, s.D, s.H); err != nil {
			t.Fatalf("accepted a system beyond the limits: %v", err)
		}
		if !(s.CA < 1 && s.CB < 1 && s.CA+s.Gamma*s.CB+s.Cw <= 1) {
			t.Fatalf("accepted a system violating Assumption 1: ‖A‖ = %v, ‖B‖ = %v, γ = %v, C_w = %v", s.CA, s.CB, s.Gamma, s.Cw)
		}
		x := make([]float64, s.N)
		s.InitialState(1, x)
		if v := s.Optimal(x); !(v >= 0) || math.IsInf(v, 0) {
			t.Fatalf("optimal cost %v, want finite and >= 0", v)
		}
	})
}
