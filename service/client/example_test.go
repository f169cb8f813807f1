package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"

	"github.com/dprl/dprl/experiment/engine"
	tabexp "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

// Serve a tabular practical-jdp experiment in seeded test mode and play its users in order:
// the regrets are those of `dprl run --family tabular --agent practical-jdp --epsilon 1
// --delta 1e-5 --episodes 500 --seeds 7 --env riverswim --env-param horizon=10`.
func ExampleSimulate() {
	dir, _ := os.MkdirTemp("", "dprl-example")
	defer os.RemoveAll(dir)
	reg := &engine.Registry{}
	reg.Register(tabexp.Family{})
	s, err := service.New(service.Config{Dir: dir, Registry: reg, AdminToken: "admin-0123456789abcdef", ClientToken: "client-0123456789abcdef", Seeded: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := httptest.NewServer(s.Handler())
	defer func() { hs.Close(); s.Close() }()

	c := client.New(hs.URL, "admin-0123456789abcdef", "client-0123456789abcdef", hs.Client())
	seed := uint64(7)
	l, err := c.Create(context.Background(), client.CreateRequest{Family: "tabular", Agent: "practical-jdp",
		Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}}, Epsilon: 1, Delta: 1e-5, Capacity: 500, Seed: &seed, Simulation: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := client.Simulate(context.Background(), c, client.SimOptions{Experiment: l.Experiment, Registry: reg, Seed: &seed})
	if err != nil {
		fmt.Println(err)
		return
	}
	cum := res.Cumulative()
	fmt.Printf("%d users, %d reports acknowledged (capacity %d)\n", len(res.Regret), res.Accepted, l.Capacity)
	fmt.Printf("cumulative regret %.6g\n", cum[len(cum)-1])
	// Output:
	// 500 users, 499 reports acknowledged (capacity 499)
	// cumulative regret 168.58
}
