package accounting

import (
	"fmt"
	"math"
)

// High-probability bounds on the error of one released prefix of a tree counter: the sum of c
// independent node noises (c = popcount(t) ≤ L, privacy spec §3.4). Each bound holds with
// probability ≥ 1 − beta. For a bound uniform over K releases and H counters pass
// beta/(K·H) (union bound, as every seed does). All functions require the scale (b or sigma)
// finite and > 0, c ≥ 1, dim ≥ 1 and beta in (0, 1).

// LaplaceSumUnionBound returns c·b·ln(c/β): with probability ≥ 1 − β the sum of c i.i.d.
// Laplace(b) variables has absolute value at most this (P(|Y| > b·ln(c/β)) = β/c for each term,
// then a union bound; privacy spec §3.4). Always valid; exact for c = 1.
func LaplaceSumUnionBound(b float64, c int, beta float64) (float64, error) {
	if err := checkBoundArgs("b", b, c, 1, beta); err != nil {
		return 0, err
	}
	return finiteBound(float64(c) * b * math.Log(float64(c)/beta))
}

// LaplaceSumChanBound returns ν·√(8 ln(2/β)) with ν = b·max(√c, √ln(2/β)): with probability
// ≥ 1 − β the sum of c independent Laplace(b) variables has absolute value at most this (Chan,
// Shi & Song 2011, Lemma 2.8 / Cor. 2.9; privacy spec §3.4). When ln(2/β) ≤ c it equals
// 2√2·b·√(c ln(2/β)), much smaller than the union bound for large c.
func LaplaceSumChanBound(b float64, c int, beta float64) (float64, error) {
	if err := checkBoundArgs("b", b, c, 1, beta); err != nil {
		return 0, err
	}
	l := math.Log(2 / beta)
	nu := b * math.Max(math.Sqrt(float64(c)), math.Sqrt(l))
	return finiteBound(nu * math.Sqrt(8*l))
}

// GaussScalarBound returns σ·√(2c ln(2/β)): the sum of c i.i.d. N(0, σ²) variables is
// N(0, cσ²) and exceeds this in absolute value with probability ≤ 2·exp(−ln(2/β)) = β
// (Gaussian tail bound P(|Z| > t) ≤ 2e^{−t²/2}; privacy spec §3.4).
func GaussScalarBound(sigma float64, c int, beta float64) (float64, error) {
	if err := checkBoundArgs("sigma", sigma, c, 1, beta); err != nil {
		return 0, err
	}
	return finiteBound(sigma * math.Sqrt(2*float64(c)*math.Log(2/beta)))
}

// GaussVecNormBound returns σ·√c·(√D + √(2 ln(1/β))), D = dim: the Euclidean norm of the sum
// of c i.i.d. N(0, σ² I_D) vectors exceeds this with probability ≤ β. ‖err‖²/(cσ²) ~ χ²_D and
// Laurent & Massart (2000, Lemma 1; seed 004 Lemma B.5) give P(U ≥ D + 2√(Dx) + 2x) ≤ e^{−x},
// with D + 2√(Dx) + 2x ≤ (√D + √(2x))² (privacy spec §3.4).
func GaussVecNormBound(sigma float64, c, dim int, beta float64) (float64, error) {
	if err := checkBoundArgs("sigma", sigma, c, dim, beta); err != nil {
		return 0, err
	}
	d := float64(dim)
	return finiteBound(sigma * math.Sqrt(float64(c)) * (math.Sqrt(d) + math.Sqrt(2*math.Log(1/beta))))
}

// SymGaussOpNormBound returns σ·√c·(4√D + √(8 ln(2/β))), D = dim: the spectral norm of the sum
// of c independent symmetric D×D Gaussian noise matrices of the Mirror kind (i.i.d. N(0, σ²)
// upper triangle, mirrored) exceeds this with probability ≤ β. From seed 004 Lemma B.4,
// ‖N‖ ≤ 4σ′√D + 2t w.p. ≥ 1 − 2exp(−t²/(2σ′²)) with σ′ = σ√c (privacy spec §3.4). For the Avg
// kind the same bound holds; for SumSqrt2 multiply by √2.
func SymGaussOpNormBound(sigma float64, c, dim int, beta float64) (float64, error) {
	if err := checkBoundArgs("sigma", sigma, c, dim, beta); err != nil {
		return 0, err
	}
	d := float64(dim)
	return finiteBound(sigma * math.Sqrt(float64(c)) * (4*math.Sqrt(d) + math.Sqrt(8*math.Log(2/beta))))
}

func checkBoundArgs(scaleName string, scale float64, c, dim int, beta float64) error {
	if err := checkPositive(scaleName, scale); err != nil {
		return err
	}
	if err := checkCount("c", c); err != nil {
		return err
	}
	if err := checkCount("dim", dim); err != nil {
		return err
	}
	return checkOpenUnit("beta", beta)
}

func finiteBound(v float64) (float64, error) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("accounting: error bound overflows, got %v", v)
	}
	return v, nil
}
