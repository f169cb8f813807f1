package tabular_test

import (
	"fmt"

	agents "github.com/dprl/dprl/agents/tabular"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// A DP-UCBVI agent with the Central privatizer (exact calibration: ε-JDP, ε = 1) on RiverSwim. At this ε
// and K the count noise swamps the data and the regret equals the no-learning line (see the
// README: the private agents need far larger K or ε). The client/server
// split is the trust boundary: the server's planner reads only the released billboard.
func Example() {
	m, _ := model.RiverSwim(20)
	const K = 2000
	root := rng.NewSeed(1)
	ag, err := agents.New(m.S, m.A, m.H, K, agents.Config{
		Algorithm: "dp-ucbvi",
		Privacy: agents.PrivacyConfig{Model: agents.JDP, Epsilon: 1, Calibration: agents.Strict,
			Beta: 0.1, EMode: agents.EPractical, EScale: 1},
		Bonus: agents.PracticalBonus(),
	}, agents.Streams{
		Tie:   root.Child("tie").Rand(),
		Noise: func(name string) noise.Source { return noise.NewSeeded(root.Child(name).Rand()) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ag.Privacy)
	reg := model.NewRegret(m)
	traj := model.NewTrajectory(m.H)
	total := 0.0
	for k := 0; k < K; k++ {
		pol, _ := ag.Server.Policy() // computed from released statistics only
		total += reg.Of(pol)         // exact regret of π_k
		m.Rollout(pol, root.Child("users").Index(uint64(k)).Rand(), traj)
		_ = ag.Server.Receive(ag.Client.Encode(traj)) // the user's message
	}
	fmt.Printf("regret %.0f (no learning: %.0f)\n", total, 3.353475*K)
	// Output:
	// jdp ε=1 (exact calibration, b=1320, L=11): effective ε = 1 (replace-one), 0.5 (zero-out)
	// regret 6710 (no learning: 6707)
}
