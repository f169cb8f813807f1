package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/report"
	"github.com/dprl/dprl/report/rliable"
	"github.com/dprl/dprl/rng"
)

// Bootstrap settings of `dprl compare` (fixed, as rliable's defaults are, so a comparison is
// reproducible; rliable uses the percentile method at 95 %).
const (
	compareResamples = 2000
	compareLevel     = 0.95
	compareSeed      = 2021
)

// seedColumn matches the per-seed columns every family writes (seed_3, seed3).
var seedColumn = regexp.MustCompile(`^seed_?[0-9]+$`)

// compareCurve is one curve of one run: its final regret R(K) per seed.
type compareCurve struct {
	Name   string           `json:"name"`
	Run    string           `json:"run"`
	Curve  string           `json:"curve"`
	K      int              `json:"final_episode"`
	Seeds  int              `json:"seeds"`
	IQM    rliable.Interval `json:"iqm"`
	finals []float64
}

// comparePair is P(R_X(K) < R_Y(K)) with its bootstrap interval.
type comparePair struct {
	X   string           `json:"x"`
	Y   string           `json:"y"`
	PXY rliable.Interval `json:"p_x_lower"`
}

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	var fig string
	var globs []string
	cmd := &cobra.Command{
		Use:   "compare RUN...",
		Short: "Compare the final regret of the curves of run directories: IQM with stratified bootstrap CIs and probability of improvement (rliable)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput("compare: name at least one run directory")
			}
			curves, err := loadCompareCurves(args, globs)
			if err != nil {
				return err
			}
			if len(curves) < 2 {
				return badInput("compare: %d curve(s) found; comparing needs at least 2", len(curves))
			}
			root := rng.NewSeed(compareSeed)
			for _, c := range curves {
				if c.IQM, err = rliable.IQMCI([][]float64{c.finals}, compareResamples, compareLevel, root.Child("iqm").Child(c.Name).Rand()); err != nil {
					return err
				}
			}
			var pairs []comparePair
			for i, x := range curves {
				for _, y := range curves[i+1:] {
					iv, err := rliable.ProbLowerCI(x.finals, y.finals, compareResamples, compareLevel, root.Child("poi").Child(x.Name).Child(y.Name).Rand())
					if err != nil {
						return err
					}
					pairs = append(pairs, comparePair{X: x.Name, Y: y.Name, PXY: iv})
				}
			}
			if fig != "" {
				labels := make([]string, len(curves))
				ivs := make([]rliable.Interval, len(curves))
				for i, c := range curves {
					labels[i], ivs[i] = c.Name, c.IQM
				}
				title := fmt.Sprintf("IQM of final regret R(K) across seeds, %d%% stratified bootstrap CI", int(100*compareLevel))
				if err := rliable.PlotIntervals(fig, title, "R(K)", labels, ivs); err != nil {
					if strings.Contains(err.Error(), ".png or .svg") {
						return usageError{err}
					}
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Resamples int             `json:"bootstrap_resamples"`
					Level     float64         `json:"confidence_level"`
					Seed      uint64          `json:"bootstrap_seed"`
					Method    string          `json:"method"`
					Curves    []*compareCurve `json:"curves"`
					Pairs     []comparePair   `json:"probability_of_improvement"`
				}{compareResamples, compareLevel, compareSeed, "percentile, stratified over seeds", curves, pairs})
			}
			return writeCompareMarkdown(stdout, curves, pairs)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print JSON instead of Markdown")
	f.StringVar(&fig, "fig", "", "write a figure of the IQMs with their CIs (.png or .svg)")
	f.StringArrayVar(&globs, "curve", nil, "only curves whose name (path under curves/, no .csv) matches this shell pattern (repeatable)")
	return cmd
}

// loadCompareCurves reads every curve CSV of the runs (filtered by globs) and returns their
// final regret per seed; every problem with the input is a bad-input error.
func loadCompareCurves(dirs, globs []string) ([]*compareCurve, error) {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, badInput("--curve: bad pattern %q: %v", g, err)
		}
	}
	labels := runLabels(dirs)
	var curves []*compareCurve
	for i, dir := range dirs {
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() {
			return nil, badInput("compare: %s is not a directory", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
			return nil, badInput("compare: %s is not a complete run directory (no manifest.json; written last by dprl run/reproduce)", dir)
		}
		var files []string
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && strings.HasSuffix(p, ".csv") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		sort.Strings(files)
		found := 0
		for _, p := range files {
			rel, _ := filepath.Rel(dir, p)
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(rel), "curves/"), ".csv")
			if !matchAny(globs, name) {
				continue
			}
			eps, cols, err := report.ReadCurveCSV(p)
			if err != nil {
				return nil, badInput("compare: %v", err)
			}
			var seeds []string
			for col := range cols {
				if seedColumn.MatchString(col) {
					seeds = append(seeds, col)
				}
			}
			if len(seeds) == 0 {
				continue // a reference line (no-learning, zero policy), not an agent's seeds
			}
			if len(eps) == 0 {
				return nil, badInput("compare: %s has no rows", p)
			}
			if len(seeds) < 2 {
				return nil, badInput("compare: %s has 1 seed; a confidence interval needs at least 2 seeds (rerun with --seeds 1-5 or more)", p)
			}
			sort.Strings(seeds)
			c := &compareCurve{Run: labels[i], Curve: name, Name: labels[i] + "/" + name, K: eps[len(eps)-1], Seeds: len(seeds)}
			for _, s := range seeds {
				c.finals = append(c.finals, cols[s][len(eps)-1])
			}
			curves = append(curves, c)
			found++
		}
		if found == 0 {
			return nil, badInput("compare: %s has no curves with per-seed columns (looked for curves/*.csv%s)", dir, globNote(globs))
		}
	}
	for _, c := range curves[1:] {
		if c.K != curves[0].K {
			return nil, badInput("compare: curves end at different episodes (%s at K=%d, %s at K=%d); R(K) is only comparable at equal K",
				curves[0].Name, curves[0].K, c.Name, c.K)
		}
	}
	return curves, nil
}

// runLabels names the runs by their directory's base name, or by the path as given when two
// base names coincide.
func runLabels(dirs []string) []string {
	count := map[string]int{}
	for _, d := range dirs {
		count[filepath.Base(filepath.Clean(d))]++
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Base(filepath.Clean(d))
		if count[out[i]] > 1 {
			out[i] = filepath.ToSlash(filepath.Clean(d))
		}
	}
	return out
}

func matchAny(globs []string, name string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

func globNote(globs []string) string {
	if len(globs) == 0 {
		return ""
	}
	return " matching --curve " + strings.Join(globs, ", ")
}

// writeCompareMarkdown prints the two tables of `dprl compare`.
func writeCompareMarkdown(w io.Writer, curves []*compareCurve, pairs []comparePair) error {
	fmt.Fprintf(w, "Final regret R(K) at K = %d: IQM across seeds with a %d %% stratified bootstrap CI (%d resamples, percentile; seed %d). Lower is better.\n\n",
		curves[0].K, int(100*compareLevel), compareResamples, compareSeed)
	rows := make([][]string, len(curves))
	for i, c := range curves {
		rows[i] = []string{c.Name, fmt.Sprint(c.Seeds), g4(c.IQM.Point), g4(c.IQM.Lo), g4(c.IQM.Hi)}
	}
	if err := report.WriteMarkdownTable(w, []string{"curve", "seeds", "IQM R(K)", "ci95_lo", "ci95_hi"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nProbability of improvement P(R_X(K) < R_Y(K)) (Mann–Whitney, ties ½; independent bootstrap CI). P(Y < X) = 1 − P(X < Y).\n\n")
	rows = make([][]string, len(pairs))
	for i, p := range pairs {
		rows[i] = []string{p.X, p.Y, g4(p.PXY.Point), g4(p.PXY.Lo), g4(p.PXY.Hi)}
	}
	return report.WriteMarkdownTable(w, []string{"X", "Y", "P(X < Y)", "ci95_lo", "ci95_hi"}, rows)
}

func g4(v float64) string { return fmt.Sprintf("%.4g", v) }
