// Package gymenvs embeds the field's standard tabular benchmarks, exported from Gymnasium's
// toy-text environments by `python -m dprl.gym_export` (pinned gymnasium 1.2.3; a Python test
// checks that every file is byte for byte the exporter's output): FrozenLake 4×4 and 8×8,
// CliffWalking and Taxi, each at Gymnasium's own time limit, with its terminal states, sparse
// transitions and its public reward table. They are what `dprl run --env taxi` and
// `dprl reproduce benchmarks` run on.
package gymenvs

import (
	"embed"
	"fmt"
	"slices"

	"github.com/dprl/dprl/model/tabular"
)

//go:embed *.json
var files embed.FS

// Env describes one embedded environment.
type Env struct {
	// Name is the environment's name in dprl (`dprl run --env NAME`).
	Name string
	// Gym is the Gymnasium id and options it was exported from.
	Gym string
	// Desc is a one-line description for `dprl list`.
	Desc string
	// File is the embedded file it loads (without ".json"; empty: Name).
	File string
	// PrivateSupport loads the file with its transition support private (MDP.PublicSupport
	// false): on a deterministic environment (CliffWalking, Taxi) the support is the whole
	// transition function, so with the support public, and the rewards public, nothing is
	// left to learn; these variants keep the dynamics to be learnt.
	PrivateSupport bool
}

// Envs returns the embedded environments in a fixed order.
func Envs() []Env {
	return []Env{
		{Name: "frozenlake4x4", Gym: "FrozenLake-v1 (4x4, slippery)", Desc: "Gymnasium FrozenLake-v1 4×4 slippery: S=16, A=4, H=100 (its time limit), 5 terminal states, reward on entering the goal (public)"},
		{Name: "frozenlake8x8", Gym: "FrozenLake8x8-v1 (slippery)", Desc: "Gymnasium FrozenLake8x8-v1 slippery: S=64, A=4, H=200 (its time limit), 11 terminal states, reward on entering the goal (public)"},
		{Name: "cliffwalking", Gym: "CliffWalking-v1", Desc: "Gymnasium CliffWalking-v1: S=48, A=4, H=50 (it has no time limit), the goal terminal, rewards −1 a step and −100 for the cliff mapped into [0, 1] (public)"},
		{Name: "taxi", Gym: "Taxi-v3 (= Taxi-v4 of gymnasium 1.4)", Desc: "Gymnasium Taxi-v3/v4: S=500, A=6, H=200 (its time limit), 2 976 sparse transitions, 4 terminal states, rewards −1 a step, −10 illegal, +20 drop-off mapped into [0, 1] (public)"},
		{Name: "cliffwalking-private-support", Gym: "CliffWalking-v1", File: "cliffwalking", PrivateSupport: true,
			Desc: "cliffwalking with its transition support private: the agent learns the (deterministic) dynamics"},
		{Name: "taxi-private-support", Gym: "Taxi-v3 (= Taxi-v4 of gymnasium 1.4)", File: "taxi", PrivateSupport: true,
			Desc: "taxi with its transition support private: the agent learns the (deterministic) dynamics"},
	}
}

// Names returns the names of the embedded environments.
func Names() []string {
	var out []string
	for _, e := range Envs() {
		out = append(out, e.Name)
	}
	return out
}

// Load returns the named environment's model (a fresh copy).
func Load(name string) (*tabular.MDP, error) {
	i := slices.IndexFunc(Envs(), func(e Env) bool { return e.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("unknown benchmark environment %q (available: %v)", name, Names())
	}
	e := Envs()[i]
	file := e.File
	if file == "" {
		file = e.Name
	}
	data, err := files.ReadFile(file + ".json")
	if err != nil {
		return nil, err
	}
	m, err := tabular.Parse(data, "json")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.Name = name
	if e.PrivateSupport {
		m.PublicSupport = false
	}
	return m, nil
}
