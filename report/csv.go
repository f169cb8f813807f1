package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/dprl/dprl/internal/atomicfile"
)

// CSV column names written by WriteCurveCSV besides the per-run columns.
const (
	colEpisode = "episode"
	colMean    = "mean"
	colLo      = "ci95_lo"
	colHi      = "ci95_hi"
)

// csvPerm is the permission of the CSV files written by WriteCurveCSV.
const csvPerm = 0o644

// WriteCurveCSV atomically writes a curve to path as CSV with the header
//
//	episode,<runNames...>,mean,ci95_lo,ci95_hi
//
// and one row per episode: the episode number, the value of every run at that
// episode, and band.Mean, band.Lo and band.Hi. Numbers are formatted with
// strconv.FormatFloat(v, 'g', -1, 64), the shortest representation that
// parses back to exactly the same float64. The confidence columns are always
// named ci95_lo and ci95_hi; they hold whatever interval band carries.
//
// Every run and band.Mean, band.Lo and band.Hi must have len(episodes)
// entries, runNames must name every run, and the names must be non-empty,
// unique and distinct from the fixed column names. Header fields are quoted
// following RFC 4180 where needed.
//
// A band of a single run (band.N == 1) has no confidence interval: the
// ci95_lo and ci95_hi columns are then left out (band.Lo and band.Hi may be
// empty), so a one-seed file never claims an interval.
func WriteCurveCSV(path string, episodes []int, runs [][]float64, runNames []string, band Band) error {
	if err := checkCurveCSV(episodes, runs, runNames, band); err != nil {
		return fmt.Errorf("report: WriteCurveCSV %s: %w", path, err)
	}
	header := make([]string, 0, len(runNames)+4)
	header = append(header, colEpisode)
	header = append(header, runNames...)
	withCI := band.N != 1
	header = append(header, colMean)
	if withCI {
		header = append(header, colLo, colHi)
	}

	err := atomicfile.WriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		// w is buffered by atomicfile; build each row in a reused byte
		// slice so the loop does no per-value allocation.
		row := make([]byte, 0, 32*(len(runs)+4))
		for t, ep := range episodes {
			row = strconv.AppendInt(row[:0], int64(ep), 10)
			for _, r := range runs {
				row = append(row, ',')
				row = strconv.AppendFloat(row, r[t], 'g', -1, 64)
			}
			row = append(row, ',')
			row = strconv.AppendFloat(row, band.Mean[t], 'g', -1, 64)
			if withCI {
				row = append(row, ',')
				row = strconv.AppendFloat(row, band.Lo[t], 'g', -1, 64)
				row = append(row, ',')
				row = strconv.AppendFloat(row, band.Hi[t], 'g', -1, 64)
			}
			row = append(row, '\n')
			if _, err := w.Write(row); err != nil {
				return err
			}
		}
		return nil
	}, csvPerm)
	if err != nil {
		return fmt.Errorf("report: WriteCurveCSV %s: %w", path, err)
	}
	return nil
}

// checkCurveCSV validates the arguments of WriteCurveCSV.
func checkCurveCSV(episodes []int, runs [][]float64, runNames []string, band Band) error {
	T := len(episodes)
	if len(runNames) != len(runs) {
		return fmt.Errorf("%d run names for %d runs", len(runNames), len(runs))
	}
	for i, r := range runs {
		if len(r) != T {
			return fmt.Errorf("run %q has %d values for %d episodes", runNames[i], len(r), T)
		}
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{"mean", band.Mean}, {"lo", band.Lo}, {"hi", band.Hi}} {
		if band.N == 1 && c.name != "mean" && len(c.v) == 0 {
			continue
		}
		if len(c.v) != T {
			return fmt.Errorf("band %s has %d values for %d episodes", c.name, len(c.v), T)
		}
	}
	seen := map[string]bool{colEpisode: true, colMean: true, colLo: true, colHi: true}
	for _, name := range runNames {
		if name == "" {
			return errors.New("empty run name")
		}
		if seen[name] {
			return fmt.Errorf("duplicate or reserved column name %q", name)
		}
		seen[name] = true
	}
	return nil
}

// ReadCurveCSV reads a CSV file whose first column is "episode" (such as one
// written by WriteCurveCSV) and returns the episode numbers and every other
// column, keyed by its header name. Values are parsed with
// strconv.ParseFloat, so files written by WriteCurveCSV round-trip exactly.
func ReadCurveCSV(path string) (episodes []int, columns map[string][]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("report: ReadCurveCSV: %w", err)
	}
	defer f.Close() // Read-only; a close error cannot lose data.

	episodes, columns, err = readCurveCSV(f)
	if err != nil {
		return nil, nil, fmt.Errorf("report: ReadCurveCSV %s: %w", path, err)
	}
	return episodes, columns, nil
}

// readCurveCSV parses the curve CSV format from r.
func readCurveCSV(r io.Reader) ([]int, map[string][]float64, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, errors.New("empty file")
	}
	if err != nil {
		return nil, nil, err
	}
	if len(header) == 0 {
		return nil, nil, errors.New("empty header")
	}
	if header[0] != colEpisode {
		return nil, nil, fmt.Errorf("first column is %q, want %q", header[0], colEpisode)
	}
	names := append([]string(nil), header[1:]...) // header is reused by Read
	cols := make([][]float64, len(names))
	columns := make(map[string][]float64, len(names))
	for _, name := range names {
		if _, dup := columns[name]; dup {
			return nil, nil, fmt.Errorf("duplicate column %q", name)
		}
		columns[name] = nil
	}
	var episodes []int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		line, _ := cr.FieldPos(0)
		ep, err := strconv.Atoi(rec[0])
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: episode: %w", line, err)
		}
		episodes = append(episodes, ep)
		for j, s := range rec[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: column %q: %w", line, names[j], err)
			}
			cols[j] = append(cols[j], v)
		}
	}
	for j, name := range names {
		columns[name] = cols[j]
	}
	return episodes, columns, nil
}
