package noise

import (
	"fmt"
	"math"
)

// SymKind selects how symmetric noise is built for a symmetric matrix (privacy spec §3.3).
// All kinds draw i.i.d. values from the calibration and differ in the variances they give the
// diagonal and off-diagonal entries.
type SymKind int

const (
	// Mirror draws ζ_ij for i ≤ j and sets N_ij = N_ji = ζ_ij: Var(diag) = Var(off) = v.
	Mirror SymKind = iota
	// SumSqrt2 sets N = (Z + Zᵀ)/√2 for an i.i.d. matrix Z: Var(diag) = 2v, Var(off) = v.
	SumSqrt2
	// Avg sets N = (Z + Zᵀ)/2: Var(diag) = v, Var(off) = v/2.
	Avg
)

// String returns the name of k.
func (k SymKind) String() string { return enumName(k, "SymKind", "mirror", "sumsqrt2", "avg") }

// PackedLen returns the length D(D+1)/2 of the packed upper triangle of a D×D matrix.
func PackedLen(d int) int { return d * (d + 1) / 2 }

// PackedIndex returns the position of entry (i, j), i ≤ j, in the row-major packed upper
// triangle of a d×d matrix.
func PackedIndex(d, i, j int) int {
	if i > j {
		i, j = j, i
	}
	return i*d - i*(i-1)/2 + (j - i)
}

// SymScales returns, for the packed upper triangle of a d×d matrix, the multiplier of the
// calibration's scale for each entry so that the noise of each entry has the distribution the
// kind prescribes. For Gaussian noise these multipliers reproduce the kind exactly; for
// Laplace noise they reproduce its variances (a sum of two Laplace variables is not Laplace, so
// SumSqrt2 and Avg are exact only in the Gaussian case; Mirror is exact for both).
func SymScales(d int, kind SymKind) []float64 {
	out := make([]float64, PackedLen(d))
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			m := 1.0
			switch kind {
			case SumSqrt2:
				if i == j {
					m = math.Sqrt2
				}
			case Avg:
				if i != j {
					m = 1 / math.Sqrt2
				}
			}
			out[PackedIndex(d, i, j)] = m
		}
	}
	return out
}

// AddSym perturbs the symmetric d×d matrix a (row-major, length d·d) in place with symmetric
// noise of the given kind: the upper triangle is drawn and mirrored, so the result is exactly
// symmetric.
func (c Calibration) AddSym(a []float64, d int, kind SymKind, src Source) error {
	if len(a) != d*d {
		return fmt.Errorf("noise: symmetric matrix has %d entries, want %d×%d", len(a), d, d)
	}
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			if a[i*d+j] != a[j*d+i] {
				return fmt.Errorf("noise: matrix is not symmetric at (%d,%d): %g != %g", i, j, a[i*d+j], a[j*d+i])
			}
		}
	}
	if c.Off() {
		return nil
	}
	scales := SymScales(d, kind)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := c.Add(a[i*d+j], scales[PackedIndex(d, i, j)], src)
			a[i*d+j] = v
			a[j*d+i] = v
		}
	}
	return nil
}
