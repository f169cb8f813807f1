package linmix

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/internal/strictdecode"
)

// File is the on-disk form of a linear mixture MDP (JSON or YAML; unknown fields rejected):
//
//	name: tiny                 # optional
//	states: 2                  # S
//	actions: 2                 # A
//	horizon: 3                 # H
//	dim: 2                     # d
//	start: 0                   # s_1
//	psi:                       # non-zero rows ψ(next|s,a), each of length d
//	  - {s: 0, a: 0, next: 0, vec: [0.5, 0]}
//	w: [[1, 0.5]]              # one vector for all steps, or H vectors
//	reward: [[0, 0], [1, 1]]   # [S][A] mean rewards in [0,1] (then ϕ = e_{sA+a}, θ_r = vec r)
//	bernoulli: false           # Bernoulli observed rewards
//
// Instead of reward, reward features may be given as phi ([S·A][d2]) and theta_r (one vector
// or H vectors). New's validation applies (probabilities, normalisation, reward range).
type File struct {
	Name      string      `json:"name,omitempty" yaml:"name,omitempty"`
	States    int         `json:"states" yaml:"states"`
	Actions   int         `json:"actions" yaml:"actions"`
	Horizon   int         `json:"horizon" yaml:"horizon"`
	Dim       int         `json:"dim" yaml:"dim"`
	Start     int         `json:"start" yaml:"start"`
	Psi       []FileEntry `json:"psi" yaml:"psi"`
	W         [][]float64 `json:"w" yaml:"w"`
	Reward    [][]float64 `json:"reward,omitempty" yaml:"reward,omitempty"`
	Phi       [][]float64 `json:"phi,omitempty" yaml:"phi,omitempty"`
	ThetaR    [][]float64 `json:"theta_r,omitempty" yaml:"theta_r,omitempty"`
	Bernoulli bool        `json:"bernoulli,omitempty" yaml:"bernoulli,omitempty"`
}

// FileEntry is one ψ row of a File.
type FileEntry struct {
	S    int       `json:"s" yaml:"s"`
	A    int       `json:"a" yaml:"a"`
	Next int       `json:"next" yaml:"next"`
	Vec  []float64 `json:"vec" yaml:"vec"`
}

// Load reads a linear mixture MDP from a .json, .yaml or .yml file.
func Load(path string) (*MDP, error) { return strictdecode.Load(path, Parse) }

// Parse reads a linear mixture MDP in the File format; format is "json", "yaml" or "yml".
func Parse(data []byte, format string) (*MDP, error) {
	var f File
	if err := strictdecode.Decode(data, format, &f); err != nil {
		return nil, fmt.Errorf("linmix file: %w", err)
	}
	return f.MDP()
}

// MDP validates f and builds the MDP.
func (f *File) MDP() (*MDP, error) {
	if f.Horizon < 1 || f.Horizon > 10000 {
		return nil, fmt.Errorf("linmix file: horizon = %d, want 1..10000", f.Horizon)
	}
	if f.States < 1 || f.Actions < 1 || f.States*f.Actions > 1<<22 {
		return nil, fmt.Errorf("linmix file: states = %d, actions = %d, want ≥ 1 each and states·actions ≤ %d", f.States, f.Actions, 1<<22)
	}
	d2 := f.States * f.Actions // the reward form: one-hot reward features
	if f.Reward == nil && len(f.Phi) > 0 {
		d2 = len(f.Phi[0])
	}
	if err := CheckSize(f.States, f.Actions, f.Horizon, f.Dim, d2, len(f.Psi)); err != nil {
		return nil, fmt.Errorf("linmix file: %w", err)
	}
	sp := Spec{Name: f.Name, States: f.States, Actions: f.Actions, Horizon: f.Horizon, Dim: f.Dim, Start: f.Start, Bernoulli: f.Bernoulli}
	if sp.Name == "" {
		sp.Name = "file"
	}
	for _, e := range f.Psi {
		sp.Psi = append(sp.Psi, PsiEntry(e))
	}
	per := func(x [][]float64, field string) ([][]float64, error) {
		switch len(x) {
		case 1:
			out := make([][]float64, f.Horizon)
			for h := range out {
				out[h] = x[0]
			}
			return out, nil
		case f.Horizon:
			return x, nil
		}
		return nil, fmt.Errorf("linmix file: %s has %d vectors, want 1 (all steps) or horizon = %d", field, len(x), f.Horizon)
	}
	var err error
	if sp.W, err = per(f.W, "w"); err != nil {
		return nil, err
	}
	switch {
	case f.Reward != nil && (f.Phi != nil || f.ThetaR != nil):
		return nil, fmt.Errorf("linmix file: give either reward or phi+theta_r, not both")
	case f.Reward != nil:
		if len(f.Reward) != f.States {
			return nil, fmt.Errorf("linmix file: reward has %d rows, want states = %d", len(f.Reward), f.States)
		}
		SA := f.States * f.Actions
		thr := make([]float64, SA)
		for s, row := range f.Reward {
			if len(row) != f.Actions {
				return nil, fmt.Errorf("linmix file: reward[%d] has %d entries, want actions = %d", s, len(row), f.Actions)
			}
			for a, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("linmix file: reward[%d][%d] = %v, want a finite number", s, a, v)
				}
			}
			copy(thr[s*f.Actions:], row)
		}
		sp.RewardDim = SA
		for sa := 0; sa < SA; sa++ {
			v := make([]float64, SA)
			v[sa] = 1
			sp.Phi = append(sp.Phi, v)
		}
		if sp.ThetaR, err = per([][]float64{thr}, "reward"); err != nil {
			return nil, err
		}
	case f.Phi != nil && f.ThetaR != nil:
		sp.Phi = f.Phi
		if len(f.Phi) > 0 {
			sp.RewardDim = len(f.Phi[0])
		}
		if sp.ThetaR, err = per(f.ThetaR, "theta_r"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("linmix file: missing rewards: give reward ([S][A]) or phi and theta_r")
	}
	return New(sp)
}
