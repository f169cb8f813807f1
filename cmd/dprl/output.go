package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/rundir"
)

// outputFlags are the output flags of every run and reproduce command: --force (replace an
// earlier run in --out) and --log-y (the y axis of the regret figures).
type outputFlags struct {
	force bool
	logY  string
}

// add registers --force and --log-y on cmd with the given default y axis.
func (o *outputFlags) add(cmd *cobra.Command, logYDefault string) {
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "replace an earlier dprl run in the output directory: the files it wrote there (its ownership record lists them) are removed first; files dprl did not write are never removed or overwritten")
	f.StringVar(&o.logY, "log-y", logYDefault, "y axis of the regret figures: auto (logarithmic when the final values differ by more than a factor 100), log or linear")
}

// check validates --log-y.
func (o outputFlags) check() error {
	switch o.logY {
	case "auto", "log", "linear":
		return nil
	}
	return badInput("--log-y: must be auto, log or linear, got %q", o.logY)
}

// options returns the flags as the families' output options.
func (o outputFlags) options() rundir.Options { return rundir.Options{Force: o.force, LogY: o.logY} }

// defaultRunDir is the run directory of a run built from flags without --out:
// runs/<family>-<agent>-<h>, where h is the first 8 hex digits of the SHA-256 of the run's
// configuration cfg marshalled as YAML (the flags after defaults; not the output options, the
// worker count or the time). Different runs get different directories, so a second run is not
// refused as they once were all runs/run; the same flags name the same directory, so an
// interrupted run resumes there and a completed one is refused without --force. Only the
// directory's name depends on it: the outputs are those of the same run with --out.
func defaultRunDir(family, agent string, cfg any) string {
	name := safeName(family) + "-" + safeName(agent)
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "runs/" + name
	}
	sum := sha256.Sum256(data)
	return "runs/" + name + "-" + hex.EncodeToString(sum[:4])
}

// safeName keeps the letters, digits, '.', '_' and '-' of s (others become '-'), so that a
// name such as "ucrl-vtr+/jdp" makes one directory name.
func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
	if s = strings.Trim(s, ".-"); s == "" {
		return "run"
	}
	return s
}
