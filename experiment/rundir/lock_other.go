//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package rundir

import "os"

// flock: this platform has no flock(2); runs proceed unlocked.
func flock(f *os.File, exclusive bool) error { return errNoLocks }
