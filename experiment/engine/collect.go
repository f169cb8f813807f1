package engine

import (
	"path/filepath"

	"github.com/dprl/dprl/experiment/rundir"
)

// CollectWritten is the Collect of a plan whose result's write (a method expression such as
// (*Result).Write) writes the run directory and returns its manifest M and the summary: it
// collects and writes the result as Collect does and returns the summary followed by the
// line "Wrote DIR (files(man))".
func CollectWritten[R Outputter, M any](c *Collection, result func(*Collection, []rundir.Input) (R, error), write func(R, string, []string) (M, string, error), files func(M) string) (string, error) {
	return Collect(c, result, func(res R) (string, error) {
		man, summary, err := write(res, c.Dir, c.Command)
		if err != nil {
			return "", err
		}
		return summary + "\nWrote " + filepath.Clean(c.Dir) + " (" + files(man) + ")", nil
	})
}
