package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment"
	"github.com/dprl/dprl/internal/strictdecode"
)

// Limits of the command line, checked before anything is allocated or computed.
const (
	// maxWorkers bounds --workers (goroutines running seeds or audit runs in parallel).
	maxWorkers = 1024
	// maxStoredValues bounds the per-episode values a reproduction keeps in memory until it
	// writes its outputs (curves·seeds·K cumulative-regret values: 4 GiB of float64).
	maxStoredValues = 1 << 29
	// maxAuditRuns bounds `audit --runs` (each run keeps its outputs on both sides).
	maxAuditRuns = 1_000_000
	// minEpsilon and maxEpsilon bound every nominal ε given on the command line or in a
	// configuration: below 1e-9 the noise scales of some calibrations (∝ H·L/ε, their squares
	// and the zCDP conversions ρ ∝ ε²) overflow or underflow; above 1e9 the accounting does.
	minEpsilon, maxEpsilon = 1e-9, 1e9
)

// checkWorkers validates --workers.
func checkWorkers(workers int) error {
	if workers < 0 || workers > maxWorkers {
		return badInput("--workers: must be in [0, %d] (0 = all cores), got %d", maxWorkers, workers)
	}
	return nil
}

// checkEpsilon validates a nominal ε: finite (or +Inf where the family reads ∞ as
// non-private), and within [minEpsilon, maxEpsilon].
func checkEpsilon(field string, eps float64, allowInf bool) error {
	if allowInf && math.IsInf(eps, 1) {
		return nil
	}
	if !(eps >= minEpsilon && eps <= maxEpsilon) {
		return badInput("%s: must be in [%g, %g], got %g (a smaller ε would make the noise scales overflow)", field, minEpsilon, maxEpsilon, eps)
	}
	return nil
}

// checkStored refuses a run whose curves·seeds·episodes stored values exceed maxStoredValues.
func checkStored(curves, seeds, episodes int) error {
	n := uint64(curves) * uint64(seeds) * uint64(max(episodes, 0))
	if curves > 1<<20 || seeds > 1<<20 || n > maxStoredValues {
		return badInput("curves·seeds·episodes = %d·%d·%d regret values exceeds the limit 2^29 values (4 GiB); use fewer --seeds or --episodes", curves, seeds, episodes)
	}
	return nil
}

// checkOut checks that the run directory out can be written, before any compute and without
// creating it: if it exists it must be a writable directory; otherwise its nearest existing
// ancestor must be a writable directory. Writability is probed by creating and removing a
// temporary file (permission bits alone are wrong for root and for read-only mounts).
func checkOut(out string) error {
	if out == "" {
		return badInput("--out: must not be empty")
	}
	p := filepath.Clean(out)
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(out) {
					return badInput("--out: %s exists and is not a directory", out)
				}
				return badInput("--out: %s: %s is not a directory", out, p)
			}
			f, err := os.CreateTemp(p, ".dprl-probe-*")
			if err != nil {
				return badInput("--out: %s: cannot write in %s: %v", out, p, errors.Unwrap(err))
			}
			name := f.Name()
			f.Close()
			os.Remove(name)
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return badInput("--out: %s: %s: %v", out, p, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return badInput("--out: %s: no existing ancestor directory", out)
		}
		p = parent
	}
}

// rejectChanged refuses flags that were set explicitly but would have no effect, naming why.
func rejectChanged(cmd *cobra.Command, why string, names ...string) error {
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			return badInput("--%s: has no effect %s; remove it", n, why)
		}
	}
	return nil
}

// preflightTabular checks a tabular experiment before any compute: every private curve's ε,
// the environment (Garnet parameters and sizes, the MDP file), the memory its regret curves
// need, --workers and the output directory. Every failure is bad input (exit status 2).
func preflightTabular(cfg *experiment.Config, workers int, out string) error {
	for i, cv := range cfg.Curves {
		if info, err := agents.Lookup(cv.Agent); err == nil && info.Model != agents.NonPrivate {
			if err := checkEpsilon(fmt.Sprintf("curves[%d].epsilon (--epsilon)", i), cv.Epsilon, false); err != nil {
				return err
			}
		}
	}
	if _, err := cfg.BuildEnv(); err != nil {
		return usageError{err}
	}
	if err := checkStored(len(cfg.Curves), len(cfg.Seeds), cfg.Episodes); err != nil {
		return err
	}
	if err := checkWorkers(workers); err != nil {
		return err
	}
	return checkOut(out)
}

// runConfigFlags are the `dprl run` flags that describe the experiment, refused beside
// --config.
var runConfigFlags = []string{"env", "env-file", "horizon", "states", "actions", "branching", "reward-density",
	"env-seed", "agent", "epsilon", "calibration", "beta", "preset", "multiplier", "e-mode", "episodes", "seeds", "noise",
	"env-param", "delta"}

// checkRunFlags validates the flag-built `dprl run` experiment before it is assembled: an
// explicit value is never replaced by a default, and a flag that would have no effect for the
// chosen environment or agent is refused.
func checkRunFlags(cmd *cobra.Command, env, agent string, beta, mult float64) error {
	ch := cmd.Flags().Changed
	if ch("beta") && !(beta > 0 && beta < 1) {
		return badInput("--beta: must be in (0, 1), got %g", beta)
	}
	if ch("multiplier") && !(mult > 0 && mult <= 1e6) {
		return badInput("--multiplier: must be in (0, 1e6], got %g (0 would switch the bonus off; the configuration format reads 0 as the default 1)", mult)
	}
	switch env {
	case "riverswim":
		if err := rejectChanged(cmd, "with --env riverswim (RiverSwim has S = 6, A = 2)", "states", "actions", "branching", "reward-density", "env-seed", "env-file"); err != nil {
			return err
		}
	case "garnet":
		if err := rejectChanged(cmd, "with --env garnet", "env-file"); err != nil {
			return err
		}
	case "file":
		if err := rejectChanged(cmd, "with --env file (the file sets the MDP, including its horizon)", "horizon", "states", "actions", "branching", "reward-density", "env-seed"); err != nil {
			return err
		}
		if !ch("env-file") {
			return badInput("--env-file: required with --env file")
		}
	}
	if info, err := agents.Lookup(agent); err == nil && info.Model == agents.NonPrivate {
		if err := rejectChanged(cmd, fmt.Sprintf("for the non-private agent %s", agent), "epsilon", "calibration", "e-mode", "noise"); err != nil {
			return err
		}
	}
	return nil
}

// checkInputFile checks a configuration file before it is parsed: a regular file of at most
// strictdecode.MaxFileSize bytes (a device such as /dev/zero or a FIFO would be read without
// end) holding exactly one YAML (or JSON) document without duplicate keys.
func checkInputFile(flag, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return badInput("%s: %v", flag, err)
	}
	if !st.Mode().IsRegular() {
		return badInput("%s: %s is not a regular file", flag, path)
	}
	if st.Size() > strictdecode.MaxFileSize {
		return badInput("%s: %s has %d bytes, more than the limit of 64 MiB", flag, path, st.Size())
	}
	// The configuration parsers decode the first YAML document; the strict decoder also
	// rejects a second document and duplicate keys, as for every model file.
	data, err := strictdecode.ReadFile(path)
	if err != nil {
		return badInput("%s: %v", flag, err)
	}
	var doc yaml.Node
	if err := strictdecode.Decode(data, "yaml", &doc); err != nil {
		return badInput("%s: %s: %v", flag, path, err)
	}
	return nil
}
