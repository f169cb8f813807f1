package tabular

import (
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// hiddenPlan hides a server's plannedFrom: its publisher compares every policy.
type hiddenPlan struct{ tabServer }

// TestPublisherPlannedFrom: a publisher that skips the comparison of actions while the
// practical UCB planner's policy comes from the same release publishes exactly the versions
// of one that compares every policy (practical-jdp, its noise-off twin and practical-ldp; and
// practical-psrl-jdp, which always compares), on RiverSwim over 3 000 users.
func TestPublisherPlannedFrom(t *testing.T) {
	m := riverswim(t)
	const K = 3000
	for _, name := range []string{"practical-jdp", "practical-ucbvi", "practical-ldp", "practical-psrl-jdp"} {
		a, b := newPracticalAgent(t, m, K, name, 1, 4), newPracticalAgent(t, m, K, name, 1, 4)
		fast, full := &publisher{srv: a.Server}, &publisher{srv: hiddenPlan{b.Server}}
		if _, ok := a.Server.(plannedFrom); !ok {
			t.Fatalf("%s: server %T has no plannedFrom", name, a.Server)
		}
		users := usersOf(2)
		traj := model.NewTrajectory(m.H)
		skipped := 0
		for k := range K - 1 {
			known, prev := fast.known, fast.from
			pf, err := fast.Publish()
			if err != nil {
				t.Fatal(err)
			}
			pc, err := full.Publish()
			if err != nil {
				t.Fatal(err)
			}
			if pf.Version != pc.Version || !policyEqual(pf.Rule, pc.Rule) {
				t.Fatalf("%s user %d: version %d (skipping), %d (comparing)", name, k, pf.Version, pc.Version)
			}
			if from, ok := a.Server.(plannedFrom).plannedFrom(); known && ok && from == prev {
				skipped++
			}
			m.Rollout(pf.Rule, users(k), traj)
			for _, ag := range []*PracticalAgent{a, b} {
				msg, err := ag.Client.Encode(traj)
				if err != nil {
					t.Fatal(err)
				}
				if err := ag.Server.Receive(msg); err != nil {
					t.Fatal(err)
				}
			}
		}
		if psrl := name == "practical-psrl-jdp"; (skipped == 0) != psrl {
			t.Errorf("%s: %d publications skipped the comparison", name, skipped)
		}
	}
}
