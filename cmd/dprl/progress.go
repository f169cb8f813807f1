package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports the progress of a long job on stderr: a progress bar with ETA when stderr
// is a terminal, one log line per 10 % otherwise, nothing when quiet. unit names what is
// counted ("episodes", "runs"). The returned finish ends the bar's line; call it once the job
// is over (it is safe to call when nothing was shown).
func progress(stderr io.Writer, name, unit string, quiet bool) (update func(done, total int64), finish func()) {
	if quiet {
		return nil, func() {}
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		var bar *progressbar.ProgressBar
		update = func(done, total int64) {
			if bar == nil {
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(stderr),
					progressbar.OptionSetDescription(name), progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionShowIts(),
					progressbar.OptionSetItsString(unit), progressbar.OptionThrottle(200*time.Millisecond))
			}
			_ = bar.Set64(done)
		}
		finish = func() {
			if bar != nil {
				_ = bar.Finish()
				fmt.Fprintln(stderr)
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
		fmt.Fprintf(stderr, "dprl: %s: %d/%d %s (%d%%), elapsed %.0fs, eta %.0fs\n", name, done, total, unit, pct*10, el, eta)
	}
	return update, func() {}
}
