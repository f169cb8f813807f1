package linmix

import (
	"math"

	model "github.com/dprl/dprl/model/linmix"
	"gonum.org/v1/gonum/mat"
)

// practicalKnown is the part of w that the features alone pin down, and the public constants
// of the regression on the rest (dprl's own; used by the practical agents only).
//
// Every transition kernel sums to one, so ⟨ψ_1(s,a), w⟩ = 1 for every (s,a), ψ_1 = Σ_{s′} ψ(s′|·):
// w lies in the public affine set {w : Ψ₁w = 1}, Ψ₁ the matrix of the rows ψ_1(s,a)ᵀ. Let R be
// the row space of Ψ₁, N = R^⊥ (orthonormal basis U, d × d_N) and w₀ ∈ R the minimum-norm
// solution of Ψ₁w₀ = 1. Then w₀ = P_R w for every admissible w, so w = w₀ + Uθ with
// θ = Uᵀw and ‖θ‖² = ‖w‖² − ‖w₀‖² ≤ C_w² − ‖w₀‖² =: C_θ².
//
// Per-(s,a) centring. For a value v and a step at (s,a) with next state s′ put
// b = ⟨ψ_v(s,a), w₀⟩ (a public function of (s, a, v)), X = U Uᵀψ_v(s,a) and
// y = (v(s′) − b)/(2Y). Then E[v(s′) | s, a] = ⟨ψ_v, w₀⟩ + ⟨ψ_v, Uθ⟩, so
// E[y | past] = ⟨Uᵀψ_v, θ⟩/(2Y) = ⟨X, Uθ⟩/(2Y) exactly: the regression estimates only the
// d_N unknown directions, its ridge shrinks towards w₀ instead of 0, its target has the
// known part removed, and the Gram noise multiplies ‖θ‖ (here 0.07) instead of ‖w‖ (1.42).
// This is the global centring c (⟨ψ_1, w⟩ = 1) made exact per (s,a): it needs no data.
//
// Public bounds (features only, before any data). With v ∈ [−½, ½]^S and P̄(t) =
// ⟨ψ(t|s,a), w₀⟩ (Σ_t P̄(t) = 1), v(s′) − b = Σ_t (1{t = s′} − P̄(t)) v(t), a linear function
// of v whose maximum modulus over the cube is ½(|1 − P̄(s′)| + Σ_{t≠s′} |P̄(t)|); Y is its
// maximum over (s, a) and s′ in the support of ψ(·|s,a), so |v(s′) − b| ≤ Y and y ∈ [−½, ½].
// B₁ = max_{s,a} max_v ‖Uᵀψ_v(s,a)‖ (PracticalFeatureBound). When Ψ₁ is zero or the
// system is inconsistent (features violating the model), U = I, w₀ = 0, Y = ½: the plain
// global-centring regression.
type practicalKnown struct {
	d, dn int
	u     []float64 // d × dn, row-major, orthonormal columns spanning N
	w0    []float64
	y     float64 // Y
}

// newPracticalKnown computes the public decomposition from m's features.
func newPracticalKnown(m *model.MDP) *practicalKnown {
	S, A, d := m.NumStates(), m.NumActions(), m.Dim()
	ones := make([]float64, S)
	for i := range ones {
		ones[i] = 1
	}
	gram := mat.NewSymDense(d, nil)
	rhs := make([]float64, d)
	row := make([]float64, d)
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			m.PsiV(s, a, ones, row)
			for i := 0; i < d; i++ {
				rhs[i] += row[i]
				for j := i; j < d; j++ {
					gram.SetSym(i, j, gram.At(i, j)+row[i]*row[j])
				}
			}
		}
	}
	k := identityKnown(d)
	var eig mat.EigenSym
	if !eig.Factorize(gram, true) {
		return k
	}
	vals := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	top := 0.0
	for _, l := range vals {
		top = max(top, math.Abs(l))
	}
	if !(top > 0) {
		return k
	}
	w0 := make([]float64, d)
	var null []int
	for j, l := range vals {
		if l <= 1e-10*top {
			null = append(null, j)
			continue
		}
		c := 0.0
		for i := 0; i < d; i++ {
			c += vec.At(i, j) * rhs[i]
		}
		for i := 0; i < d; i++ {
			w0[i] += c / l * vec.At(i, j)
		}
	}
	// consistency: ⟨ψ_1(s,a), w₀⟩ = 1 for every (s,a)
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			m.PsiV(s, a, ones, row)
			if math.Abs(dot(row, w0)-1) > 1e-9 {
				return k
			}
		}
	}
	k.dn, k.w0, k.u = len(null), w0, make([]float64, d*len(null))
	for c, j := range null {
		for i := 0; i < d; i++ {
			k.u[i*k.dn+c] = vec.At(i, j)
		}
	}
	// Y: the maximum modulus of v(s′) − ⟨ψ_v, w₀⟩ over the cube, (s,a) and s′ ∈ supp.
	e := make([]float64, S)
	pbar := make([]float64, S)
	k.y = 0
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			tot := 0.0
			var supp []int
			for n := 0; n < S; n++ {
				e[n] = 1
				m.PsiV(s, a, e, row)
				e[n] = 0
				if dot(row, row) > 0 {
					supp = append(supp, n)
				}
				pbar[n] = dot(row, w0)
				tot += math.Abs(pbar[n])
			}
			for _, n := range supp {
				k.y = max(k.y, (math.Abs(1-pbar[n])+tot-math.Abs(pbar[n]))/2)
			}
		}
	}
	if !(k.y > 0) || math.IsInf(k.y, 0) {
		return identityKnown(d)
	}
	k.y *= 1 + 1e-12
	return k
}

func identityKnown(d int) *practicalKnown {
	k := &practicalKnown{d: d, dn: d, u: make([]float64, d*d), w0: make([]float64, d), y: 0.5}
	for i := 0; i < d; i++ {
		k.u[i*d+i] = 1
	}
	return k
}

// reduce writes Uᵀx (length dn) into out.
func (k *practicalKnown) reduce(x, out []float64) { k.mul(x, out, true) }

// expand writes U z (length d) into out.
func (k *practicalKnown) expand(z, out []float64) { k.mul(z, out, false) }

// mul writes U z (length d) or, transposed, Uᵀz (length dn) into out, summing in index order.
func (k *practicalKnown) mul(z, out []float64, transposed bool) {
	n, m, so, si := k.d, k.dn, k.dn, 1 // out[o] = Σ_i U[o][i]·z[i]
	if transposed {
		n, m, so, si = k.dn, k.d, 1, k.dn // out[o] = Σ_i U[i][o]·z[i]
	}
	for o := 0; o < n; o++ {
		s := 0.0
		for i := 0; i < m; i++ {
			s += k.u[o*so+i*si] * z[i]
		}
		out[o] = s
	}
}

// cTheta returns C_θ = √(max(C_w² − ‖w₀‖², 0)), the bound on ‖θ‖.
func (k *practicalKnown) cTheta(cw float64) float64 {
	return math.Sqrt(max(cw*cw-dot(k.w0, k.w0), 0))
}
