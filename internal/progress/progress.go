// Package progress reports the progress of a long job (a run's episodes, an audit's runs) on
// the command line's standard error.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// New reports the progress of a job called name on w: a progress bar with ETA when w is a
// terminal, one log line per 10 % otherwise, nothing when quiet (update is then nil). unit
// names what is counted ("episodes", "runs"). The returned finish ends the bar's line; call it
// once the job is over (it is safe to call when nothing was shown).
func New(w io.Writer, name, unit string, quiet bool) (update func(done, total int64), finish func()) {
	if quiet {
		return nil, func() {}
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		var bar *progressbar.ProgressBar
		update = func(done, total int64) {
			if bar == nil {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
					progressbar.OptionSetDescription(name), progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionShowIts(),
					progressbar.OptionSetItsString(unit), progressbar.OptionThrottle(200*time.Millisecond))
			}
			_ = bar.Set64(done)
		}
		finish = func() {
			if bar != nil {
				_ = bar.Finish()
				fmt.Fprintln(w)
			}
		}
		return update, finish
	}
	last := int64(-1)
	start := time.Now()
	update = func(done, total int64) {
		pct := done * 10 / max(total, 1)
		if pct == last {
			return
		}
		last = pct
		el := time.Since(start).Seconds()
		eta := 0.0
		if done > 0 {
			eta = el * float64(total-done) / float64(done)
		}
		fmt.Fprintf(w, "dprl: %s: %d/%d %s (%d%%), elapsed %.0fs, eta %.0fs\n", name, done, total, unit, pct*10, el, eta)
	}
	return update, func() {}
}
