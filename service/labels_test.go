package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/families"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

// liveAll starts a server of every family (families.New) and returns its URL.
func liveAll(t *testing.T) string {
	t.Helper()
	_, hs, _ := service.StartForTest(t, service.Config{Dir: t.TempDir(), Registry: families.New(), AdminToken: adminTok, ClientToken: clientTok})
	return hs.URL
}

// TestCreateNoFalseLabels: an experiment is created private only when its agent's own
// accountant certifies the requested (ε, δ); a non-private agent, or one whose calibration is
// not private at its nominal ε, is refused with an ε (400 naming epsilon); a non-private
// experiment exists only when asked for (non_private, with neither ε nor δ) and is labelled
// NON-PRIVATE in the create answer, the ledger and the page; δ outside (0, 1) is refused, never
// replaced, and an omitted δ is the stated default.
func TestCreateNoFalseLabels(t *testing.T) {
	url := liveAll(t)
	envs := map[string]string{"tabular": `{"name":"riverswim","params":{"horizon":5}}`, "lq": `{"name":"lq-e1"}`,
		"linmix": `{"name":"two-state-hard"}`, "linmdp": `{"name":"riverswim"}`}
	body := func(family, agent, extra string) []byte {
		return []byte(fmt.Sprintf(`{"family":%q,"agent":%q,"env":%s,"capacity":100%s}`, family, agent, envs[family], extra))
	}
	type ledger struct {
		Experiment, Statement string
		Epsilon, Delta, Mu    float64
		Private               bool
	}
	var nonPrivate []string
	for _, c := range []struct {
		family, agent, extra string
		status               int
		field                string
		private              bool
	}{
		// Non-private agents with an ε: refused (they would read as private at it).
		{"tabular", "ucbvi", `,"epsilon":1`, 400, "epsilon", false},
		{"tabular", "practical-ucbvi", `,"epsilon":1`, 400, "epsilon", false},
		{"tabular", "practical-psrl", `,"epsilon":1,"delta":1e-5`, 400, "epsilon", false},
		{"linmdp", "lsvi-ucb", `,"epsilon":1`, 400, "epsilon", false},
		{"linmix", "ucrl-vtr/none", `,"epsilon":1`, 400, "epsilon", false},
		{"lq", "ofu-rl", `,"epsilon":1`, 400, "epsilon", false},
		{"lq", "practical-ofu-rl-noise-off", `,"epsilon":1`, 400, "epsilon", false},
		// Private agents whose calibration is not private at the nominal ε.
		{"linmdp", "ngo-printed", `,"epsilon":1`, 400, "epsilon", false},
		// ε and δ out of range, or missing, are refused (never defaulted).
		{"tabular", "practical-jdp", ``, 400, "epsilon", false},
		{"tabular", "practical-jdp", `,"epsilon":0`, 400, "epsilon", false},
		{"tabular", "practical-jdp", `,"epsilon":1,"delta":0`, 400, "delta", false},
		{"tabular", "practical-jdp", `,"epsilon":1,"delta":1`, 400, "delta", false},
		{"tabular", "practical-jdp", `,"epsilon":1,"delta":-1e-5`, 400, "delta", false},
		// non_private: only for agents that claim no guarantee, with neither ε nor δ.
		{"tabular", "practical-jdp", `,"non_private":true`, 400, "", false},
		{"tabular", "ucbvi", `,"non_private":true,"epsilon":1`, 400, "epsilon", false},
		{"tabular", "ucbvi", `,"non_private":true,"delta":1e-5`, 400, "delta", false},
		// Accepted.
		{"tabular", "practical-jdp", `,"epsilon":1`, 201, "", true},
		{"tabular", "practical-ldp", `,"epsilon":1,"delta":1e-6`, 201, "", true},
		{"tabular", "dp-ucbvi-jdp", `,"epsilon":1`, 201, "", true},
		{"linmdp", "ngo", `,"epsilon":1`, 201, "", true},
		{"linmix", "ucrl-vtr/jdp", `,"epsilon":0.5`, 201, "", true},
		// Outside Luyo's stated range ε < 1, but the ledger certifies ε ≈ 0.002 from its σ.
		{"linmix", "ucrl-vtr/jdp", `,"epsilon":1`, 201, "", true},
		{"linmix", "practical-vtr/jdp", `,"epsilon":1`, 201, "", true},
		{"lq", "private-ofu-rl", `,"epsilon":1`, 201, "", true},
		// The papers' linear agents on the service's Secure noise: their ledgers carry the grid
		// rounding (a relative increase of ε below 10⁻⁵), which changes no verdict.
		{"linmdp", "luyo-batched", `,"epsilon":0.5`, 201, "", true},
		{"linmdp", "luyo-zcdp", `,"epsilon":1`, 201, "", true},
		{"linmix", "ucrl-vtr/ldp", `,"epsilon":0.5`, 201, "", true},
		{"linmix", "ucrl-vtr+/jdp", `,"epsilon":0.5`, 201, "", true},
		{"linmix", "linopt-vi/jdp", `,"epsilon":1`, 201, "", true},
		{"lq", "practical-ofu-rl", `,"epsilon":1`, 201, "", true},
		{"tabular", "ucbvi", `,"non_private":true`, 201, "", false},
		{"linmdp", "lsvi-ucb", `,"non_private":true`, 201, "", false},
		{"lq", "practical-ofu-rl-noise-off", `,"non_private":true`, 201, "", false},
	} {
		t.Run(c.family+"/"+c.agent+c.extra, func(t *testing.T) {
			code, resp := rawReq(t, url, "POST", "/v1/experiments", adminTok, body(c.family, c.agent, c.extra), nil)
			if code != c.status {
				t.Fatalf("status %d, want %d: %s", code, c.status, resp)
			}
			if c.status != 201 {
				var e struct {
					Error struct{ Field, Message string }
				}
				if err := json.Unmarshal([]byte(resp), &e); err != nil || e.Error.Message == "" {
					t.Fatalf("not a JSON error: %s", resp)
				}
				if c.field != "" && e.Error.Field != c.field {
					t.Errorf("field %q, want %q: %s", e.Error.Field, c.field, e.Error.Message)
				}
				return
			}
			var created ledger
			if err := json.Unmarshal([]byte(resp), &created); err != nil {
				t.Fatal(err)
			}
			_, led := rawReq(t, url, "GET", "/v1/experiments/"+created.Experiment+"/ledger", "", nil, nil)
			var l ledger
			if err := json.Unmarshal([]byte(led), &l); err != nil {
				t.Fatal(err)
			}
			for what, l := range map[string]ledger{"create answer": created, "ledger": l} {
				nonPriv := strings.HasPrefix(l.Statement, "NON-PRIVATE")
				if l.Private != c.private || nonPriv == c.private {
					t.Errorf("%s: private %v, statement %q; want private %v", what, l.Private, l.Statement, c.private)
				}
				switch {
				case c.private && (l.Epsilon <= 0 || l.Delta <= 0 || l.Delta >= 1):
					t.Errorf("%s: a private experiment states ε = %g, δ = %g", what, l.Epsilon, l.Delta)
				case c.private && !strings.Contains(c.extra, "delta") && l.Delta != 1e-5:
					t.Errorf("%s: δ omitted, the answer states δ = %g, want the default 1e-5", what, l.Delta)
				case !c.private && (l.Epsilon != 0 || l.Delta != 0 || l.Mu != 0):
					t.Errorf("%s: a non-private experiment states ε = %g, δ = %g, μ = %g", what, l.Epsilon, l.Delta, l.Mu)
				}
			}
			if !c.private {
				nonPrivate = append(nonPrivate, created.Experiment)
			}
		})
	}
	if len(nonPrivate) == 0 {
		t.Fatal("no non-private experiment created")
	}
	_, page := rawReq(t, url, "GET", "/", "", nil, nil)
	for _, id := range nonPrivate {
		_, sec, _ := strings.Cut(page, `id="exp-`+id+`"`)
		sec, _, _ = strings.Cut(sec, "</section>")
		if !strings.Contains(sec, "NON-PRIVATE") || strings.Contains(sec, "is private") || strings.Contains(sec, "ε =") {
			t.Errorf("page section of non-private experiment %s:\n%s", id, sec)
		}
	}
}

// TestSimulatedRegretOnlyForSimulations: a simulated regret (header Dprl-Simulated-Regret, batch
// field simulated_regret) is refused (400 naming the field, nothing changes) by an experiment
// not created as a simulation, and accepted by one that was; client.Simulate against a real
// experiment sends none, and only the simulation shows a curve.
func TestSimulatedRegretOnlyForSimulations(t *testing.T) {
	c, url, _ := liveURL(t, t.TempDir(), true)
	ctx := context.Background()
	create := func(sim bool) string {
		l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}},
			Epsilon: 1, Delta: 1e-5, Capacity: 100, Seed: seedp(3), Simulation: sim})
		if err != nil {
			t.Fatal(err)
		}
		if l.Simulation != sim {
			t.Fatalf("created with simulation %v, the answer says %v", sim, l.Simulation)
		}
		return l.Experiment
	}
	real, sim := create(false), create(true)
	head := header(t, c, real)
	traj, _ := protocol.EncodeBinary(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)})
	trajJSON, _ := json.Marshal(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)})
	ledgerOf := func(id string) string {
		_, b := rawReq(t, url, "GET", "/v1/experiments/"+id+"/ledger", "", nil, nil)
		return b
	}
	for _, id := range []string{real, sim} {
		creds, err := c.Credentials(ctx, id, []string{"u", "v"})
		if err != nil {
			t.Fatal(err)
		}
		before := ledgerOf(id)
		code, resp := rawReq(t, url, "POST", "/v1/experiments/"+id+"/reports", clientTok, traj,
			map[string]string{"Dprl-User": "u", "Dprl-User-Credential": creds["u"], "Idempotency-Key": "k", "Dprl-Simulated-Regret": "0.5"})
		batch := fmt.Sprintf(`{"reports":[{"user":"v","credential":%q,"idempotency_key":"k","simulated_regret":0.25,"report":%s}]}`, creds["v"], trajJSON)
		bcode, bresp := rawReq(t, url, "POST", "/v1/experiments/"+id+"/reports/batch", clientTok, []byte(batch), nil)
		if id == sim {
			if code != 201 || bcode != 200 || !strings.Contains(bresp, `"status":201`) {
				t.Fatalf("simulation: %d %s; batch %d %s", code, resp, bcode, bresp)
			}
			if !strings.Contains(ledgerOf(id), `"cumulative_regret":0.75`) {
				t.Errorf("simulation: the curve lacks the regrets: %s", ledgerOf(id))
			}
			continue
		}
		if code != 400 || !strings.Contains(resp, `"field":"Dprl-Simulated-Regret"`) {
			t.Errorf("real experiment, single report with a regret: %d %s", code, resp)
		}
		if bcode != 200 || !strings.Contains(bresp, `"status":400`) || !strings.Contains(bresp, `"field":"reports[0].simulated_regret"`) {
			t.Errorf("real experiment, batch item with a regret: %d %s", bcode, bresp)
		}
		if after := ledgerOf(id); after != before {
			t.Errorf("the refused regrets changed the ledger:\n%s\n%s", before, after)
		}
	}
	// Simulate against the real experiment: it plays, measures its regrets, sends none.
	res, err := client.Simulate(ctx, c, client.SimOptions{Experiment: real, Registry: registry(), Users: 20, Seed: seedp(3), UserPrefix: "s-"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 20 || math.IsNaN(res.Cumulative()[19]) {
		t.Fatalf("simulate: %d accepted", res.Accepted)
	}
	if l := ledgerOf(real); strings.Contains(l, "simulated_regret") || !strings.Contains(l, `"simulation":false`) {
		t.Errorf("real experiment after Simulate: %s", l)
	}
}
