package service

import (
	"sync"
	"time"
)

// SetCommitFault makes the store of a server built from cfg call f inside every append
// transaction before it commits (an error aborts the commit): injected commit and fsync
// failures.
func SetCommitFault(cfg *Config, f func() error) { cfg.commitFault = f }

// SetProbeInterval sets the storage prober's period.
func SetProbeInterval(cfg *Config, d time.Duration) { cfg.probeEvery = d }

// atExit are functions TestMain runs after the tests (a PostgreSQL cluster shared by the
// tests of DPRL_SERVICE_STORE=postgres is removed there).
var atExit struct {
	mu sync.Mutex
	fs []func()
}

// AtExit makes TestMain call f after every test ran.
func AtExit(f func()) {
	atExit.mu.Lock()
	atExit.fs = append(atExit.fs, f)
	atExit.mu.Unlock()
}

func runAtExit() {
	atExit.mu.Lock()
	defer atExit.mu.Unlock()
	for _, f := range atExit.fs {
		f()
	}
}
