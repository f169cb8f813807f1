package families_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/families"
)

// snapshotCase is one served agent: its family, agent, environment and capacity K.
type snapshotCase struct {
	family, agent, env string
	params             map[string]float64
	K                  int
}

// snapshotCases are the servable agents of the four families (every curator implements
// protocol.Snapshotter), the practical agents first (what real users get).
var snapshotCases = []snapshotCase{
	{"tabular", "practical-jdp", "riverswim", map[string]float64{"horizon": 10}, 400},
	{"tabular", "practical-ldp", "riverswim", map[string]float64{"horizon": 10}, 400},
	{"tabular", "practical-psrl-jdp", "riverswim", map[string]float64{"horizon": 10}, 400},
	{"tabular", "dp-ucbvi-jdp", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"tabular", "dp-ucbvi-ldp", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"tabular", "practical-jdp-theory", "riverswim", map[string]float64{"horizon": 10}, 200},
	{"tabular", "practical-jdp-plugin", "riverswim", map[string]float64{"horizon": 10}, 200},
	{"tabular", "practical-ldp-plugin", "riverswim", map[string]float64{"horizon": 10}, 200},
	{"tabular", "practical-ucbvi", "riverswim", map[string]float64{"horizon": 10}, 200},
	{"tabular", "practical-psrl", "riverswim", map[string]float64{"horizon": 10}, 200},
	{"tabular", "ucbvi", "riverswim", map[string]float64{"horizon": 5}, 120},
	// Terminal states, entry rewards and a public reward table (the agent's copy is state).
	{"tabular", "practical-jdp", "frozenlake4x4", nil, 200},
	{"tabular", "practical-ldp", "frozenlake4x4", nil, 200},
	{"linmdp", "practical-lsvi", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "practical-lsvi-batched", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "ngo", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "practical-rare-switch", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "practical-batch-twin", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "practical-lsvi-noiseoff", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "rare-switch", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmdp", "rare-switch-reg", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmdp", "ngo-printed", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmdp", "luyo-zcdp", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmdp", "luyo-nonbatched", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmdp", "batch-twin", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmdp", "practical-lsvi-theory", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "luyo-batched", "riverswim", map[string]float64{"horizon": 5}, 120},
	{"linmdp", "lsvi-ucb", "riverswim", map[string]float64{"horizon": 5}, 60},
	{"linmix", "practical-vtr/jdp", "two-state-hard", map[string]float64{"horizon": 5}, 120},
	{"linmix", "practical-vtr/ldp", "two-state-hard", map[string]float64{"horizon": 5}, 120},
	{"linmix", "practical-vtr/none", "two-state-hard", map[string]float64{"horizon": 5}, 120},
	{"linmix", "ucrl-vtr/jdp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "ucrl-vtr/ldp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "linopt-vi/jdp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "linopt-vi/ldp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "linopt-vi/none", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "linopt-po/jdp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "linopt-po/ldp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "linopt-po/none", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "ucrl-vtr/none", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "ucrl-vtr+/jdp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "ucrl-vtr+/ldp", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"linmix", "ucrl-vtr+/none", "two-state-hard", map[string]float64{"horizon": 5}, 60},
	{"lq", "practical-ofu-rl", "lq-e1", nil, 200},
	{"lq", "practical-ofu-rl-theory", "lq-e1", nil, 200},
	{"lq", "practical-ofu-rl-noise-off", "lq-e1", nil, 200},
	{"lq", "private-ofu-rl", "lq-e1", nil, 100},
	{"lq", "ofu-rl", "lq-e1", nil, 100},
}

// TestSnapshotRestore: for every case, a curator fed N reports, snapshotted, restored into a
// fresh session and fed M more publishes exactly what an uninterrupted one does — every
// policy (version and rule bytes) and, at the end, the same complete state (the counters'
// released sums, the noise sources' positions, the public streams). A snapshot that missed
// any noise or stream position would publish different releases after the restore.
func TestSnapshotRestore(t *testing.T) {
	reg := families.New()
	for _, c := range snapshotCases {
		t.Run(c.family+"/"+c.agent, func(t *testing.T) {
			spec := engine.RunSpec{Family: c.family, Name: "served", Agents: []string{c.agent}, Runs: engine.Runs{Episodes: c.K, Seeds: []uint64{3}},
				Env:     engine.EnvSpec{Name: c.env, Params: c.params},
				Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5, Noise: "secure"}}
			if err := spec.Validate(); err != nil { // defaults, as the service's create does
				t.Fatal(err)
			}
			sv, err := engine.CheckServed(reg, &spec)
			if err != nil {
				t.Fatal(err)
			}
			key := [32]byte{1, 2, 3}
			st := engine.Streams{Seed: 3, Key: &key}
			session := func() protocol.Session {
				t.Helper()
				s, err := sv.Session(&spec, st)
				if err != nil {
					t.Fatal(err)
				}
				return s.Session
			}
			reports := recordReports(t, session(), st, spec.Episodes)
			head := session().Expect()
			n := len(reports) / 2

			whole := session()
			want := feedAll(t, whole, head, reports, true)

			first := session()
			got := feedAll(t, first, head, reports[:n], true)
			snap, ok := first.Curator().(protocol.Snapshotter)
			if !ok {
				t.Fatalf("the curator %T is not a protocol.Snapshotter", first.Curator())
			}
			state, err := snap.MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			second := session()
			if err := second.Curator().(protocol.Snapshotter).RestoreState(state); err != nil {
				t.Fatal(err)
			}
			// A restored curator publishes the snapshotted policy (the committer republishes it
			// only when the version changes).
			got = append(got, feedAll(t, second, head, reports[n:], false)...)
			if len(got) != len(want) {
				t.Fatalf("%d publications, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("publication %d (after %d reports; snapshot after %d): restored %.200s, uninterrupted %.200s", i, i, n, got[i], want[i])
				}
			}
			a, err := whole.Curator().(protocol.Snapshotter).MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			b, err := second.Curator().(protocol.Snapshotter).MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("the restored curator's final state (%d bytes) differs from the uninterrupted one's (%d bytes)", len(b), len(a))
			}
		})
	}
}

// recordReports plays the K users of s in process and returns each report's binary encoding.
func recordReports(t *testing.T, s protocol.Session, st engine.Streams, K int) [][]byte {
	t.Helper()
	var out [][]byte
	err := protocol.Run(context.Background(), s, protocol.Options{Episodes: K, Users: st.Episodes(engine.FromZero),
		Transport: func(r protocol.Report) (protocol.Report, error) {
			b, err := protocol.EncodeBinary(r)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
			return r, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// feedAll publishes (when first), then receives each report and publishes after it, as the
// service's committer does, and returns every publication as "version rule".
func feedAll(t *testing.T, s protocol.Session, head protocol.Header, reports [][]byte, first bool) []string {
	t.Helper()
	var out []string
	publish := func() {
		v, rule, err := s.Publish()
		if err != nil {
			out = append(out, "error "+err.Error())
			return
		}
		raw, err := protocol.EncodeRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s", v, raw))
	}
	if first {
		publish()
	}
	for i, b := range reports {
		rep, err := protocol.Decode(b, head)
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if err := s.Receive(rep); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		publish()
	}
	return out
}
