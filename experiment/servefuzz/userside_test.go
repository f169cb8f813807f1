package servefuzz

import (
	"context"
	"reflect"
	"testing"

	linmixagent "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
)

// TestLDPUserNoiseIndependentOfCapacity: a locally private user computes her noise from her
// own (ε, δ) and the public dimensions; the capacity K she takes from the server's ledger
// cannot change it. For every servable LDP agent of every family, the first user's privatised
// report (her trajectory under the first policy, which no report has influenced yet, plus her
// noise) is the same whether the agent is built for K = 10 or K = 100 000 users: a server that
// states another K gives her no less noise.
func TestLDPUserNoiseIndependentOfCapacity(t *testing.T) {
	n := 0
	for _, tg := range []Target{tabular, linmdp, linmix, lq} {
		for _, name := range tg.Agents {
			var (
				reports [2]protocol.Report
				scales  [2][]float64
			)
			for i, k := range []int{Capacity, 100000} {
				sv, err := tg.ServedK(reg(), name, 3, k)
				if err != nil {
					t.Fatal(err)
				}
				if sv.Session.Expect().Kind != protocol.KindPrivatized {
					break
				}
				if c, ok := sv.Privacy.(linmixagent.Constants); ok {
					scales[i] = append(append([]float64(nil), c.SigmaMat...), c.SigmaVec...)
				}
				st := engine.Streams{Seed: 3}
				o := protocol.Options{Episodes: 1, Users: st.Episodes(sv.Users), Transport: func(r protocol.Report) (protocol.Report, error) {
					reports[i] = r
					return r, nil
				}}
				if err := protocol.Run(context.Background(), sv.Session, o); err != nil {
					t.Fatalf("%s/%s K = %d: %v", tg.Family, name, k, err)
				}
			}
			if reports[0] == nil {
				continue
			}
			n++
			switch {
			case reflect.DeepEqual(reports[0], reports[1]):
			case scales[0] != nil && reflect.DeepEqual(scales[0], scales[1]):
				// The first policy itself depends on K (UCRL-VTR+'s β and Υ grow with K), so
				// the user's regressors differ; her noise scales, which the report adds to
				// them, do not.
				t.Logf("%s/%s: the first policy depends on K; the user's noise scales %v do not", tg.Family, name, scales[0])
			default:
				t.Errorf("%s/%s: the first user's privatised report depends on the capacity K the server states (noise scales %v vs %v)", tg.Family, name, scales[0], scales[1])
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d LDP agents checked", n)
	}
	t.Logf("%d LDP agents checked", n)
}
