package client

import (
	"bytes"
	"context"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	tabexp "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/service/servicetest"
)

// capture is a protocol.Remote serving one fixed policy and recording every report's bytes.
type capture struct {
	version uint64
	rule    []byte
	reports [][]byte
}

func (c *capture) Policy(context.Context) (uint64, []byte, error) { return c.version, c.rule, nil }

func (c *capture) Submit(_ context.Context, _ int, r protocol.Report, _ float64) error {
	b, err := protocol.EncodeBinary(r)
	if err != nil {
		return err
	}
	c.reports = append(c.reports, b)
	return nil
}

// userReports plays the first users of a practical-ldp riverswim session built as Simulate
// builds its users' side (streams st, noise source noiseName) and returns their reports.
func userReports(t *testing.T, st engine.Streams, noiseName string) [][]byte {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(tabexp.Family{})
	spec := engine.RunSpec{Family: "tabular", Name: "simulated", Agents: []string{"practical-ldp"}, Runs: engine.Runs{Episodes: 10},
		Env:     engine.EnvSpec{Name: "riverswim", Params: map[string]float64{"horizon": 6}},
		Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5, Noise: noiseName}}
	spec.Seeds = []uint64{st.Seed}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	sv, err := engine.CheckServed(reg, &spec)
	if err != nil {
		t.Fatal(err)
	}
	served, err := sv.Session(&spec, st)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := servicetest.NewCurator(served.Session)
	if err != nil {
		t.Fatal(err)
	}
	c := &capture{version: cur.Last, rule: cur.Rule()}
	if err := protocol.RunRemote(context.Background(), served.Session, protocol.Options{Episodes: 10, Users: st.Episodes(served.Users)}, c); err != nil {
		t.Fatal(err)
	}
	if len(c.reports) != 9 {
		t.Fatalf("%d reports, want 9", len(c.reports))
	}
	return c.reports
}

// TestUserNoiseIsUnpredictable: by default the users' LDP noise comes from the operating
// system's CSPRNG — the streams Simulate uses (userStreams(nil)) are "secure" with no key, and
// two user sides built from the very same run seed (so the same episodes) send different
// reports — while only an explicit seed (test mode) makes them reproducible.
func TestUserNoiseIsUnpredictable(t *testing.T) {
	st, name, err := userStreams(nil)
	if err != nil {
		t.Fatal(err)
	}
	if name != "secure" || st.Key != nil {
		t.Fatalf("default user noise %q (key %v), want secure from the OS CSPRNG, no key", name, st.Key != nil)
	}
	st2, _, err := userStreams(nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Seed == st2.Seed {
		t.Fatal("two default user streams have the same seed")
	}
	st2.Seed = st.Seed // the same episodes: only the noise may differ
	a, b := userReports(t, st, name), userReports(t, st2, name)
	for i := range a {
		if bytes.Equal(a[i], b[i]) {
			t.Fatalf("user %d sent the same noisy report twice from the same run seed: her noise is predictable", i+1)
		}
	}
	seed := uint64(7)
	st, name, err = userStreams(&seed)
	if err != nil {
		t.Fatal(err)
	}
	if name != "seeded" || st.Seed != 7 {
		t.Fatalf("seeded test mode: got %q seed %d", name, st.Seed)
	}
	a, b = userReports(t, st, name), userReports(t, st, name)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("seeded test mode: user %d's report differs between two runs", i+1)
		}
	}
}
