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
}

// Envs returns the embedded environments in a fixed order.
func Envs() []Env {
	return []Env{
		{"frozenlake4x4", "FrozenLake-v1 (4x4, slippery)", "Gymnasium FrozenLake-v1 4×4 slippery: S=16, A=4, H=100 (its time limit), 5 terminal states, reward on entering the goal (public)"},
		{"frozenlake8x8", "FrozenLake8x8-v1 (slippery)", "Gymnasium FrozenLake8x8-v1 slippery: S=64, A=4, H=200 (its time limit), 11 terminal states, reward on entering the goal (public)"},
		{"cliffwalking", "CliffWalking-v1", "Gymnasium CliffWalking-v1: S=48, A=4, H=50 (it has no time limit), the goal terminal, rewards −1 a step and −100 for the cliff mapped into [0, 1] (public)"},
		{"taxi", "Taxi-v3 (= Taxi-v4 of gymnasium 1.4)", "Gymnasium Taxi-v3/v4: S=500, A=6, H=200 (its time limit), 2 976 sparse transitions, 4 terminal states, rewards −1 a step, −10 illegal, +20 drop-off mapped into [0, 1] (public)"},
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
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("unknown benchmark environment %q (available: %v)", name, Names())
	}
	data, err := files.ReadFile(name + ".json")
	if err != nil {
		return nil, err
	}
	m, err := tabular.Parse(data, "json")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.Name = name
	return m, nil
}
