package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/membudget"
	"github.com/dprl/dprl/internal/strictdecode"
)

// maxAuditRuns bounds `audit --runs` (each run keeps its outputs on both sides).
const maxAuditRuns = 1_000_000

// checkWorkers validates --workers.
func checkWorkers(workers int) error {
	if workers < 0 || workers > bounds.MaxWorkers {
		return badInput("--workers: must be in [0, %d] (0 = all cores), got %d", bounds.MaxWorkers, workers)
	}
	return nil
}

// checkOut checks that the run directory out can be written (engine.CheckWritable), before any
// compute and without creating it.
func checkOut(out string) error {
	if err := engine.CheckWritable(out); err != nil {
		return badInput("--out: %v", err)
	}
	return nil
}

// parseSeeds parses --seeds (engine.ParseSeeds).
func parseSeeds(s string) ([]uint64, error) {
	sd, err := engine.ParseSeeds(s)
	if err != nil {
		return nil, badInput("--seeds: %v", err)
	}
	return sd, nil
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
	if ch("multiplier") && !(mult > 0 && mult <= bounds.MaxMultiplier) {
		return badInput("--multiplier: must be in %s, got %g (0 would switch the bonus off; the configuration format reads 0 as the default 1)", bounds.MultiplierRange, mult)
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
	if err := membudget.CheckConfigYAML(data); err != nil {
		return badInput("%s: %s: %v", flag, path, err) // before a node tree is built
	}
	var doc yaml.Node
	if err := strictdecode.Decode(data, "yaml", &doc); err != nil {
		return badInput("%s: %s: %v", flag, path, err)
	}
	return nil
}
