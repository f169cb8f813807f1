package service

import "time"

// SetCommitFault makes the store of a server built from cfg call f inside every append
// transaction before it commits (an error aborts the commit): injected commit and fsync
// failures.
func SetCommitFault(cfg *Config, f func() error) { cfg.commitFault = f }

// SetProbeInterval sets the storage prober's period.
func SetProbeInterval(cfg *Config, d time.Duration) { cfg.probeEvery = d }
