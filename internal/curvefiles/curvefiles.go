// Package curvefiles finds the wide curve CSVs of a run directory (the CSV files below a
// directory named "curves") and names their curves: the engine builds regret_long.csv from
// them and compare reads them when a run has no regret_long.csv.
package curvefiles

import (
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Dir is the directory component of the wide curve CSVs.
const Dir = "curves"

// List returns the CSV files of dir below a directory named Dir (curves/X.csv,
// curves/G/X.csv, B/curves/X.csv), relative to dir, in sorted order. Directories named skip
// (a sweep's unit files) are not entered; keep, when not nil, is asked about every CSV file by
// its path relative to dir, and a file it refuses is left out.
func List(dir, skip string, keep func(rel string) bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == skip {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".csv") {
			rel, _ := filepath.Rel(dir, p)
			if keep != nil && !keep(rel) {
				return nil
			}
			if slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), Dir) {
				files = append(files, rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// Name returns the curve of the wide curve CSV rel (a path List returned): rel without ".csv"
// and without its Dir components, slash-separated, as in regret_long.csv.
func Name(rel string) string {
	var parts []string
	for _, part := range strings.Split(strings.TrimSuffix(filepath.ToSlash(rel), ".csv"), "/") {
		if part != Dir {
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, "/")
}
