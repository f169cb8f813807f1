package linmdp

import (
	"fmt"

	"github.com/dprl/dprl/internal/strictdecode"
)

// File is the on-disk form of a linear MDP (JSON or YAML; unknown fields are rejected):
//
//	name: tiny                # optional
//	horizon: 3                # H
//	features:                 # φ: [N][A][d], ‖φ(s,a)‖₂ ≤ 1
//	  - [[1, 0], [0, 1]]
//	  - [[1, 0], [0, 1]]
//	mu:                       # μ: [1][N][d] (homogeneous) or [H][N][d]
//	  - [[1, 0], [0, 1]]
//	theta:                    # θ: [1][d] or [H][d] (same count as mu)
//	  - [0, 1]
//	init: [1, 0]              # initial distribution, length N
//
// All normalisations checked by New must hold.
type File struct {
	Name     string        `json:"name,omitempty" yaml:"name,omitempty"`
	Horizon  int           `json:"horizon" yaml:"horizon"`
	Features [][][]float64 `json:"features" yaml:"features"`
	Mu       [][][]float64 `json:"mu" yaml:"mu"`
	Theta    [][]float64   `json:"theta" yaml:"theta"`
	Init     []float64     `json:"init" yaml:"init"`
}

// Load reads a linear MDP from a .json, .yaml or .yml file.
func Load(path string) (*MDP, error) {
	data, err := strictdecode.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data, strictdecode.FormatOf(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Parse reads a linear MDP in the File format; format is "json", "yaml" or "yml".
func Parse(data []byte, format string) (*MDP, error) {
	var f File
	if err := strictdecode.Decode(data, format, &f); err != nil {
		return nil, fmt.Errorf("linear-mdp file: %w", err)
	}
	if f.Horizon < 1 || f.Horizon > 100000 {
		return nil, fmt.Errorf("linear-mdp file: horizon must be in [1, 100000], got %d", f.Horizon)
	}
	if len(f.Features) == 0 || len(f.Features[0]) == 0 || len(f.Features[0][0]) == 0 {
		return nil, fmt.Errorf("linear-mdp file: features must be a non-empty [N][A][d] array")
	}
	name := f.Name
	if name == "" {
		name = "file"
	}
	m, err := New(name, f.Features, f.Mu, f.Theta, f.Init, f.Horizon)
	if err != nil {
		return nil, fmt.Errorf("linear-mdp file: %w", err)
	}
	return m, nil
}
