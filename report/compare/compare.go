// Package compare is the library behind `dprl compare`: it reads the per-seed regret curves of
// run directories written by `dprl run` and `dprl reproduce`, checks that they are comparable
// (same final episode K, same environment), and reports the final regret R(K) of each curve as
// an interquartile mean with a stratified bootstrap confidence interval and the probability of
// improvement of every pair of curves (package rliable), as Markdown, JSON or a figure.
//
// A run directory holds regret_long.csv (family,curve,seed,episode,regret: every curve's
// per-seed regret in long format, written by the engine just before the manifest), which is
// read when present; older run directories hold only the wide curve CSVs below a "curves"
// directory (episode,seed_1,…,mean,…), which are read otherwise. config.resolved.yaml, when
// present, gives each curve's environment.
//
// Every problem with the input is an *InputError naming the file, and for a bad value its
// line and column.
package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dprl/dprl/report"
	"github.com/dprl/dprl/report/rliable"
	"github.com/dprl/dprl/rng"
)

// Bootstrap settings (fixed, as rliable's defaults are, so that a comparison is reproducible;
// rliable uses the percentile method at 95 %).
const (
	Resamples = 2000
	Level     = 0.95
	Seed      = 2021
)

// InputError is a problem with the input (the run directories, their files, the options): the
// command line reports it with exit status 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// bad returns an *InputError.
func bad(format string, args ...any) error { return &InputError{fmt.Errorf(format, args...)} }

// Options control Load.
type Options struct {
	// Globs keep only the curves whose name matches one of these shell patterns (path.Match);
	// none keeps every curve.
	Globs []string
	// AllowDifferentEnv compares curves of different environments (with a warning) instead of
	// refusing.
	AllowDifferentEnv bool
	// Warn receives warnings, one per line (nil: discarded).
	Warn io.Writer
}

// Curve is one curve of one run: its final regret R(K) per seed.
type Curve struct {
	// Name is Run/Curve, the curve's name in the outputs.
	Name string `json:"name"`
	// Run labels the run directory (its base name, or its path when two base names coincide).
	Run string `json:"run"`
	// Curve is the curve's name within the run (as in regret_long.csv).
	Curve string `json:"curve"`
	// Env describes the curve's environment ("" when the run does not say).
	Env string `json:"environment,omitempty"`
	// K is the final episode.
	K int `json:"final_episode"`
	// Seeds is the number of seeds.
	Seeds int `json:"seeds"`
	// IQM is the IQM of Finals with its bootstrap interval (set by Analyse).
	IQM rliable.Interval `json:"iqm"`
	// Finals are the seeds' R(K), in ascending seed order.
	Finals []float64 `json:"-"`
	// File is the file the curve was read from.
	File string `json:"-"`
}

// Pair is P(R_X(K) < R_Y(K)) with its bootstrap interval.
type Pair struct {
	X   string           `json:"x"`
	Y   string           `json:"y"`
	PXY rliable.Interval `json:"p_x_lower"`
}

// Result is a comparison.
type Result struct {
	Resamples int      `json:"bootstrap_resamples"`
	Level     float64  `json:"confidence_level"`
	Seed      uint64   `json:"bootstrap_seed"`
	Method    string   `json:"method"`
	Curves    []*Curve `json:"curves"`
	Pairs     []Pair   `json:"probability_of_improvement"`
}

// Run loads the curves of the run directories and analyses them.
func Run(dirs []string, opt Options) (*Result, error) {
	curves, err := Load(dirs, opt)
	if err != nil {
		return nil, err
	}
	return Analyse(curves)
}

// Analyse computes each curve's IQM with its interval and the probability of improvement of
// every pair (in the order of curves), with the fixed bootstrap settings. It needs at least
// two curves, each with at least two seeds and finite values.
func Analyse(curves []*Curve) (*Result, error) {
	if len(curves) < 2 {
		return nil, bad("compare: %d curve(s) found; comparing needs at least 2", len(curves))
	}
	root := rng.NewSeed(Seed)
	var err error
	for _, c := range curves {
		if c.IQM, err = rliable.IQMCI([][]float64{c.Finals}, Resamples, Level, root.Child("iqm").Child(c.Name).Rand()); err != nil {
			return nil, fmt.Errorf("compare: %s: %w", c.Name, err)
		}
	}
	res := &Result{Resamples: Resamples, Level: Level, Seed: Seed, Method: "percentile, stratified over seeds", Curves: curves}
	for i, x := range curves {
		for _, y := range curves[i+1:] {
			iv, err := rliable.ProbLowerCI(x.Finals, y.Finals, Resamples, Level, root.Child("poi").Child(x.Name).Child(y.Name).Rand())
			if err != nil {
				return nil, fmt.Errorf("compare: %s vs %s: %w", x.Name, y.Name, err)
			}
			res.Pairs = append(res.Pairs, Pair{X: x.Name, Y: y.Name, PXY: iv})
		}
	}
	return res, nil
}

// WriteJSON writes r as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the two tables of a comparison: the IQMs, and the probabilities of
// improvement.
func (r *Result) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "Final regret R(K) at K = %d: IQM across seeds with a %d %% stratified bootstrap CI (%d resamples, percentile; seed %d). Lower is better.\n\n",
		r.Curves[0].K, int(100*r.Level), r.Resamples, r.Seed)
	if envs := distinctEnvs(r.Curves); len(envs) == 1 && envs[0] != "" {
		fmt.Fprintf(w, "Environment: %s.\n\n", envs[0])
	}
	rows := make([][]string, len(r.Curves))
	for i, c := range r.Curves {
		rows[i] = []string{c.Name, fmt.Sprint(c.Seeds), g4(c.IQM.Point), g4(c.IQM.Lo), g4(c.IQM.Hi)}
	}
	if err := report.WriteMarkdownTable(w, []string{"curve", "seeds", "IQM R(K)", "ci95_lo", "ci95_hi"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nProbability of improvement P(R_X(K) < R_Y(K)) (Mann–Whitney, ties ½; independent bootstrap CI). P(Y < X) = 1 − P(X < Y).\n\n")
	rows = make([][]string, len(r.Pairs))
	for i, p := range r.Pairs {
		rows[i] = []string{p.X, p.Y, g4(p.PXY.Point), g4(p.PXY.Lo), g4(p.PXY.Hi)}
	}
	return report.WriteMarkdownTable(w, []string{"X", "Y", "P(X < Y)", "ci95_lo", "ci95_hi"}, rows)
}

func g4(v float64) string { return fmt.Sprintf("%.4g", v) }

// CheckFigurePath refuses a figure path that is neither .png nor .svg (an *InputError naming
// the flag), so that a bad --fig is refused before anything is read.
func CheckFigurePath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
	default:
		return bad("--fig: %s: the figure file must end in .png or .svg", path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return bad("--fig: %s: the figure's directory %s does not exist or is not a directory", path, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return bad("--fig: %s exists and is not a regular file", path)
	}
	return nil
}

// Plot writes a figure of the IQMs with their intervals to path (.png or .svg).
func (r *Result) Plot(path string) error {
	if err := CheckFigurePath(path); err != nil {
		return err
	}
	labels := make([]string, len(r.Curves))
	ivs := make([]rliable.Interval, len(r.Curves))
	for i, c := range r.Curves {
		labels[i], ivs[i] = c.Name, c.IQM
	}
	title := fmt.Sprintf("IQM of final regret R(K) across seeds, %d%% stratified bootstrap CI", int(100*r.Level))
	return rliable.PlotIntervals(path, title, "R(K)", labels, ivs)
}

// distinctEnvs returns the distinct environments of curves, in order of first appearance.
func distinctEnvs(curves []*Curve) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range curves {
		if !seen[c.Env] {
			seen[c.Env] = true
			out = append(out, c.Env)
		}
	}
	return out
}

// IsInputError reports whether err is (or wraps) an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Report is `dprl compare`: it checks the figure path fig (none when ""), compares the run
// directories dirs (Run), writes the figure, and writes the result on w as JSON (asJSON) or
// Markdown. Problems with the input are *InputError values.
func Report(w io.Writer, dirs []string, opt Options, fig string, asJSON bool) error {
	if fig != "" {
		if err := CheckFigurePath(fig); err != nil {
			return err
		}
	}
	res, err := Run(dirs, opt)
	if err != nil {
		return err
	}
	if fig != "" {
		if err := res.Plot(fig); err != nil {
			return err
		}
	}
	if asJSON {
		return res.WriteJSON(w)
	}
	return res.WriteMarkdown(w)
}
