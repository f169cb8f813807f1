package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MaxShards bounds the number of shards a sweep can be split into (every command that takes a
// shard count checks it before planning anything).
const MaxShards = 1_000_000

// Shard selects the units of one task of a sweep: unit j belongs to shard j mod N.
type Shard struct {
	// I is the shard's index in [0, N); N the number of shards.
	I, N int
}

// ParseShard parses "i/n". An empty s takes i and n from the environment of a cluster array
// task: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (Slurm job arrays), or
// JOB_COMPLETION_INDEX with n from the flag-less default DPRL_SHARDS (Kubernetes Indexed
// Jobs). getenv is os.Getenv outside tests.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	src := "--shard"
	if s == "" {
		switch {
		case getenv("SLURM_ARRAY_TASK_ID") != "":
			s = getenv("SLURM_ARRAY_TASK_ID") + "/" + getenv("SLURM_ARRAY_TASK_COUNT")
			src = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT"
		case getenv("JOB_COMPLETION_INDEX") != "":
			s = getenv("JOB_COMPLETION_INDEX") + "/" + getenv("DPRL_SHARDS")
			src = "JOB_COMPLETION_INDEX/DPRL_SHARDS"
		default:
			return Shard{}, fmt.Errorf("--shard: required (i/n), or run inside a Slurm array task (SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)")
		}
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%s: want i/n with integers 0 <= i < n, got %q", src, s)
	}
	if n < 1 || n > MaxShards || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%s: want 0 <= i < n <= %d, got %d/%d", src, MaxShards, i, n)
	}
	return Shard{I: i, N: n}, nil
}

// Units returns the indices of the shard's units among total units.
func (s Shard) Units(total int) []int {
	var out []int
	for j := s.I; j < total; j += s.N {
		out = append(out, j)
	}
	return out
}

// RunShard runs the shard's units that are not complete yet in dir (a rerun of a killed task
// resumes). It does not collect: `dprl sweep merge` does, once every shard is done.
func RunShard(ctx context.Context, p *Planned, l Local, dir string, s Shard) (ran, skipped int, err error) {
	var todo []int
	for _, i := range s.Units(len(p.Units())) {
		if complete(dir, p.Units()[i]) {
			skipped++
			continue
		}
		todo = append(todo, i)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, skipped, fmt.Errorf("out: %w", err)
	}
	return len(todo), skipped, l.Launch(ctx, p, dir, todo)
}

// WriteUnits writes the units of the sweep p (`dprl sweep plan`): a header, one line per unit
// (index, its shard among shards, ID, seed, cell) and the total cost.
func WriteUnits(w io.Writer, p *Planned, shards int) {
	var cost int64
	fmt.Fprintf(w, "# %s: family %s, %d units\n# index shard id seed cell\n", p.Name(), p.Family, len(p.Units()))
	for i, u := range p.Units() {
		fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%s\n", i, i%shards, u.ID(), u.Seed, u.Cell)
		cost += u.Cost
	}
	fmt.Fprintf(w, "# total cost %d episodes\n", cost)
}
