package tabular

import (
	"math"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// TestPlannerReadsNoisyRelease: what the planner of a private agent reads (Server.Billboard,
// the input of Planner.Plan) after one user is her exact counts plus one tree node (JDP) or
// one report (LDP) of i.i.d. Laplace(b) noise per entry, b = Privacy.Scale (Qiao & Wang §5.1,
// §5.2; tabular spec §7.5). Over many independently seeded agents the residuals (released −
// exact) of N, N' and R must have mean square 2b² within 6 standard errors (√(5/n) relative
// for Laplace, E Y⁴ = 24b⁴), and E must be positive. A planner fed exact counts (residual 0,
// E = 0) or a release with half the noise (mean square b²/2) fails.
func TestPlannerReadsNoisyRelease(t *testing.T) {
	const S, A, H, K, agents = 3, 2, 2, 9, 60
	tr := &model.Trajectory{S: []int{0, 2, 1}, A: []int{1, 0}, R: []float64{0.25, 1}}
	for _, mdl := range []Model{JDP, LDP} {
		t.Run(mdl.String(), func(t *testing.T) {
			var sum, b float64
			n := 0
			for i := range agents {
				ag, err := New(S, A, H, K, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(mdl, 1, Strict, EPractical), Bonus: PracticalBonus()},
					seededStreams(uint64(500+i)))
				if err != nil {
					t.Fatal(err)
				}
				b = ag.Privacy.Scale
				if !(b > 0) {
					t.Fatalf("Laplace scale %v", b)
				}
				if err := ag.Server.Receive(ag.Client.Encode(tr)); err != nil {
					t.Fatal(err)
				}
				bb := ag.Server.Billboard()
				if !(bb.E > 0) {
					t.Fatalf("released E = %v, want > 0 for a private release", bb.E)
				}
				exN, exNT, exR := make([]float64, H*S*A), make([]float64, H*S*A*S), make([]float64, H*S*A)
				for h := 0; h < H; h++ {
					j := (h*S+tr.S[h])*A + tr.A[h]
					exN[j]++
					exR[j] += tr.R[h]
					exNT[j*S+tr.S[h+1]]++
				}
				for _, c := range []struct{ got, want []float64 }{{bb.N, exN}, {bb.NT, exNT}, {bb.R, exR}} {
					if len(c.got) != len(c.want) {
						t.Fatalf("release has %d entries, want %d", len(c.got), len(c.want))
					}
					for j, v := range c.got {
						z := (v - c.want[j]) / b
						sum += z * z
						n++
					}
				}
			}
			ms := sum / float64(n) / 2 // in units of the Laplace variance 2b²
			tol := 6 * math.Sqrt(5/float64(n))
			if math.Abs(ms-1) > tol {
				t.Errorf("%s: released noise has mean square %.4f·2b² (b = %g), want 1 ± %.4f (%d entries)", mdl, ms, b, tol, n)
			}
		})
	}
}
