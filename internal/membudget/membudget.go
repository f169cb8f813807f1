// Package membudget is dprl's memory budget (issue 18 #3): every run is estimated before it
// allocates, and a run whose estimate exceeds the budget is refused (exit status 2, with the
// estimate, the budget and the parameter to lower) instead of crashing the Go runtime with
// "fatal error: out of memory".
//
// The budget is, in order of precedence:
//
//   - the global flag --memory SIZE of the dprl command (Resolve);
//   - the environment variable DPRL_MEMORY=SIZE;
//   - by default, 3/4 of the least of: the physical memory (MemTotal of /proc/meminfo), the
//     cgroup's memory.max, and the address space (RLIMIT_AS) or data segment (RLIMIT_DATA)
//     still free when dprl starts (the limit less what is already mapped: a Go binary maps
//     about 1.7 GB of address space before its first allocation).
//
// An explicit budget above what RLIMIT_AS, RLIMIT_DATA or the cgroup leave is capped there.
// SIZE is a number of bytes with an optional unit: B, KiB, MiB, GiB, TiB (also K, M, G, T),
// or KB, MB, GB, TB (powers of 1000), e.g. "3GiB", "512MiB", "1.5G". Set also sets the Go
// runtime's soft memory limit (debug.SetMemoryLimit) to the budget, so that the garbage
// collector works harder as a run nears it.
//
// Estimates are upper bounds of the big allocations (per-unit agent state × the units running
// at once, stored curves, the collection of the outputs) plus Overhead; each family computes
// its own (experiment/engine MemoryEstimate) and docs/limits.md lists them.
package membudget

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// EnvVar is the environment variable that sets the budget (the flag --memory wins over it).
const EnvVar = "DPRL_MEMORY"

// ReportVar, when set to 1 in the environment, makes every passed check print its estimate
// and the budget on standard error ("dprl: memory: …"): calibration and diagnostics.
const ReportVar = "DPRL_MEMORY_REPORT"

// Overhead is what every estimate counts beside its big allocations: the binary, the Go
// runtime, goroutine stacks and the many small allocations no family itemises (a trivial
// dprl run peaks at about 20 MB of resident memory).
const Overhead = 48 << 20

// MinBudget is the least budget --memory and DPRL_MEMORY accept (every estimate counts
// Overhead, so a smaller budget would refuse everything).
const MinBudget = 64 << 20

// Budget is the memory budget of this process.
type Budget struct {
	// Bytes is the budget in bytes.
	Bytes int64
	// Source says where it comes from ("--memory 3GiB", "3/4 of MemTotal 23.5 GiB", …).
	Source string
}

func (b Budget) String() string {
	return fmt.Sprintf("%s (%d bytes; %s)", Format(b.Bytes), b.Bytes, b.Source)
}

// limits are the machine's and the process's memory limits (0 = none), read by readLimits.
type limits struct {
	memTotal   int64 // /proc/meminfo MemTotal
	cgroup     int64 // cgroup memory.max (v2) or memory.limit_in_bytes (v1)
	rlimitAS   int64 // RLIMIT_AS soft limit
	rlimitData int64 // RLIMIT_DATA soft limit
	vmSize     int64 // /proc/self/status VmSize: address space mapped now
	vmData     int64 // /proc/self/status VmData: data segment now
}

// asReserve is kept free of an RLIMIT_AS or RLIMIT_DATA budget beside what is mapped at start:
// the stacks (8 MB each) and malloc arenas of threads started later, and the runtime's
// metadata for a growing heap.
const asReserve = 128 << 20

// room returns the bytes each hard limit leaves, with the name of the limit; the least is
// the binding one. A limit that is not set is left out.
func (l limits) room() (bytes int64, what string) {
	bytes = math.MaxInt64
	consider := func(b int64, w string) {
		if b < bytes {
			bytes, what = b, w
		}
	}
	if l.cgroup > 0 {
		consider(l.cgroup, "cgroup memory.max "+Format(l.cgroup))
	}
	if l.rlimitAS > 0 {
		consider(max(l.rlimitAS-l.vmSize-asReserve, 0), fmt.Sprintf("RLIMIT_AS %s less %s mapped at start", Format(l.rlimitAS), Format(l.vmSize)))
	}
	if l.rlimitData > 0 {
		consider(max(l.rlimitData-l.vmData-asReserve, 0), fmt.Sprintf("RLIMIT_DATA %s less %s in use at start", Format(l.rlimitData), Format(l.vmData)))
	}
	return bytes, what
}

// defaultBudget is 3/4 of the least of the physical memory and the rooms of the hard limits.
func (l limits) defaultBudget() Budget {
	b, what := l.room()
	if l.memTotal > 0 && l.memTotal < b {
		b, what = l.memTotal, "MemTotal "+Format(l.memTotal)
	}
	if b == math.MaxInt64 {
		// No limit could be read (not Linux?): a budget that refuses nothing absurd.
		return Budget{Bytes: 8 << 30, Source: "default 8 GiB (no MemTotal, cgroup or rlimit found)"}
	}
	return Budget{Bytes: max(b/4*3, MinBudget), Source: "3/4 of " + what}
}

// capped caps an explicit budget at the rooms of the hard limits (not at the physical
// memory: a user may count on swap).
func (l limits) capped(b Budget) Budget {
	if room, what := l.room(); b.Bytes > room {
		return Budget{Bytes: max(room, MinBudget), Source: b.Source + ", capped at the room of " + what}
	}
	return b
}

func readLimits() limits {
	var l limits
	if v, ok := procField("/proc/meminfo", "MemTotal:"); ok {
		l.memTotal = v
	}
	if v, ok := procField("/proc/self/status", "VmSize:"); ok {
		l.vmSize = v
	}
	if v, ok := procField("/proc/self/status", "VmData:"); ok {
		l.vmData = v
	}
	l.cgroup = cgroupLimit()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err == nil && r.Cur != ^uint64(0) && r.Cur < math.MaxInt64 {
		l.rlimitAS = int64(r.Cur)
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &r); err == nil && r.Cur != ^uint64(0) && r.Cur < math.MaxInt64 {
		l.rlimitData = int64(r.Cur)
	}
	return l
}

// procField reads a "Name:   123 kB" line of a /proc file, in bytes.
func procField(path, name string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == name {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, false
			}
			if len(f) >= 3 && strings.EqualFold(f[2], "kB") {
				v *= 1024
			}
			return v, true
		}
	}
	return 0, false
}

// cgroupLimit returns the memory limit of this process's cgroup (v2 memory.max, or v1
// memory.limit_in_bytes), 0 when there is none.
func cgroupLimit() int64 {
	var paths []string
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				paths = append(paths, filepath.Join("/sys/fs/cgroup", parts[2], "memory.max"))
			case strings.Contains(","+parts[1]+",", ",memory,"):
				paths = append(paths, filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			}
		}
	}
	paths = append(paths, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return 0
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 || v >= 1<<60 { // v1 writes a huge number for "no limit"
			return 0
		}
		return v
	}
	return 0
}

// Default returns the default budget of this process (no --memory, no DPRL_MEMORY).
func Default() Budget { return readLimits().defaultBudget() }

// Parse parses a SIZE: a non-negative number with an optional unit (B, KiB, MiB, GiB, TiB, K,
// M, G, T: powers of 1024; KB, MB, GB, TB: powers of 1000), case-insensitive.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil || mult == 0 {
		return 0, fmt.Errorf("%q is not a size (want e.g. 3GiB, 512MiB, 1.5G or a number of bytes; units B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	b := v * mult
	if b >= 1<<62 {
		return 0, fmt.Errorf("%q is too large (at most 4 EiB)", s)
	}
	return int64(b), nil
}

// Resolve returns the budget given by the flag --memory (when flagSet), else by DPRL_MEMORY,
// else the default; an explicit budget is capped by the hard limits. The error names the
// flag or the variable.
func Resolve(flagValue string, flagSet bool) (Budget, error) {
	l := readLimits()
	for _, src := range []struct {
		name, value string
		set         bool
	}{{"--memory", flagValue, flagSet}, {EnvVar, os.Getenv(EnvVar), os.Getenv(EnvVar) != ""}} {
		if !src.set {
			continue
		}
		b, err := Parse(src.value)
		if err != nil {
			return Budget{}, fmt.Errorf("%s: %w", src.name, err)
		}
		if b < MinBudget {
			return Budget{}, fmt.Errorf("%s: %q is below the least budget of 64 MiB", src.name, src.value)
		}
		return l.capped(Budget{Bytes: b, Source: src.name + " " + strings.TrimSpace(src.value)}), nil
	}
	return l.defaultBudget(), nil
}

var (
	mu      sync.Mutex
	current *Budget
)

// Set makes b the budget of this process and the Go runtime's soft memory limit.
func Set(b Budget) {
	mu.Lock()
	defer mu.Unlock()
	current = &b
	debug.SetMemoryLimit(b.Bytes)
}

// Apply resolves the budget (Resolve: the flag --memory when flagSet, else DPRL_MEMORY, else
// the default) and makes it this process's (Set).
func Apply(flagValue string, flagSet bool) error {
	b, err := Resolve(flagValue, flagSet)
	if err != nil {
		return err
	}
	Set(b)
	return nil
}

// Current returns the budget set by Set, or the default one (without setting the runtime's
// memory limit) when Set was never called (library use, tests).
func Current() Budget {
	mu.Lock()
	defer mu.Unlock()
	if current == nil {
		b := Default()
		current = &b
	}
	return *current
}

// Format renders a byte count for messages: "1.50 GiB", "512 MiB", "800 B".
func Format(n int64) string {
	f := float64(n)
	switch {
	case n >= 1<<40:
		return fmt.Sprintf("%.2f TiB", f/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", f/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", f/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", f/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Term is one big allocation of an estimate: what it is, its bytes, and the parameter(s)
// whose lowering shrinks it (e.g. "episodes (--episodes)").
type Term struct {
	What  string
	Bytes int64
	Lower string
}

// Terms is a list of terms.
type Terms []Term

// Sum returns the bytes of every term.
func (ts Terms) Sum() int64 {
	var s int64
	for _, t := range ts {
		s = addSat(s, t.Bytes)
	}
	return s
}

// Scale returns the terms with their bytes multiplied by n (n units at once).
func (ts Terms) Scale(n int64) Terms {
	out := make(Terms, len(ts))
	for i, t := range ts {
		out[i] = Term{What: t.What, Bytes: mulSat(t.Bytes, n), Lower: t.Lower}
	}
	return out
}

// Describe renders the terms, largest first, at most four: "regret curves 763 MiB
// (lower episodes (--episodes)); …".
func (ts Terms) Describe() string {
	s := append(Terms(nil), ts...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Bytes > s[j].Bytes })
	var parts []string
	for i, t := range s {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("%d smaller terms", len(s)-4))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", t.What, Format(t.Bytes)))
	}
	return strings.Join(parts, "; ")
}

// lower returns the distinct parameters of the terms that weigh at least 5 % of their sum,
// largest term first.
func (ts Terms) lower() []string {
	s := append(Terms(nil), ts...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Bytes > s[j].Bytes })
	var out []string
	seen := map[string]bool{}
	sum := ts.Sum()
	for _, t := range s {
		if t.Bytes < sum/20 {
			break
		}
		for _, p := range strings.Split(t.Lower, ";") {
			p = strings.TrimSpace(p)
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// Estimate is an upper bound of the memory a run (or a decode) needs.
type Estimate struct {
	// Bytes is the estimate, Overhead included.
	Bytes int64
	// Detail says how it is made up.
	Detail string
	// Lower lists the parameters to lower, the most effective first.
	Lower []string
}

// FromTerms makes an estimate of Overhead plus 5/4 of the terms (see Phases).
func FromTerms(ts Terms) Estimate {
	return Estimate{Bytes: addSat(addSat(Overhead, ts.Sum()), ts.Sum()/4), Detail: ts.Describe() + fmt.Sprintf(", + 1/4 for the garbage collector and %s of overhead", Format(Overhead)), Lower: ts.lower()}
}

// Phases makes the estimate of a run with a phase of n units at once (each of unit terms,
// n = 0 for none) and a collection phase (collect terms, nil for none), on top of fixed terms
// held throughout: Overhead + 5/4·(fixed + max(n·unit, collect)), the 1/4 for the heap the
// garbage collector has not yet reclaimed and for fragmentation.
func Phases(fixed Terms, n int64, unit, collect Terms) Estimate {
	run := mulSat(unit.Sum(), n)
	var col int64
	if collect != nil {
		col = collect.Sum()
	}
	heap := addSat(fixed.Sum(), max(run, col))
	total := addSat(addSat(Overhead, heap), heap/4) // the collector's headroom and fragmentation: 1/4
	var parts []string
	all := append(Terms(nil), fixed...)
	if len(fixed) > 0 {
		parts = append(parts, fmt.Sprintf("fixed %s [%s]", Format(fixed.Sum()), fixed.Describe()))
	}
	if n == 1 && len(unit) > 0 {
		parts = append(parts, fmt.Sprintf("1 unit %s [%s]", Format(unit.Sum()), unit.Describe()))
	} else if n > 1 && len(unit) > 0 {
		parts = append(parts, fmt.Sprintf("%d units at once × %s per unit [%s]", n, Format(unit.Sum()), unit.Describe()))
	}
	if collect != nil {
		parts = append(parts, fmt.Sprintf("collection %s [%s]", Format(col), collect.Describe()))
	}
	lowerTerms := all
	if n > 0 && run >= col {
		lowerTerms = append(lowerTerms, unit.Scale(n)...)
		if n > 1 {
			lowerTerms = append(lowerTerms, Term{What: "workers", Bytes: run - unit.Sum(), Lower: "workers (--workers)"})
		}
	} else {
		lowerTerms = append(lowerTerms, collect...)
	}
	detail := strings.Join(parts, " + ")
	if n > 0 && collect != nil {
		detail = strings.Replace(detail, " + collection", ", then collection", 1) + " (the larger of the running and collecting phases counts)"
	}
	detail += fmt.Sprintf(", + 1/4 for the garbage collector and %s of overhead", Format(Overhead))
	return Estimate{Bytes: total, Detail: detail, Lower: lowerTerms.lower()}
}

// Error is a refusal: the estimate exceeds the budget. It is bad input (exit status 2).
type Error struct {
	Estimate Estimate
	Budget   Budget
	// What names what is refused ("this run", "the YAML document").
	What string
}

func (e *Error) Error() string {
	what := e.What
	if what == "" {
		what = "this run"
	}
	lower := "its size"
	if len(e.Estimate.Lower) > 0 {
		lower = strings.Join(e.Estimate.Lower, ", ")
	}
	return fmt.Sprintf("memory: %s needs an estimated %s (%d bytes: %s), more than the memory budget of %s (%d bytes; %s); lower %s, or raise the budget with --memory or %s (see docs/limits.md)",
		what, Format(e.Estimate.Bytes), e.Estimate.Bytes, e.Estimate.Detail, Format(e.Budget.Bytes), e.Budget.Bytes, e.Budget.Source, lower, EnvVar)
}

// IsError reports whether err is (or wraps) a refusal of this package.
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Check refuses an estimate above the current budget (an *Error naming what); with
// DPRL_MEMORY_REPORT=1 a passed check prints its estimate on standard error.
func Check(what string, e Estimate) error {
	b := Current()
	if e.Bytes > b.Bytes {
		return &Error{Estimate: e, Budget: b, What: what}
	}
	mu.Lock()
	w := report
	mu.Unlock()
	if w == nil && os.Getenv(ReportVar) == "1" {
		w = os.Stderr
	}
	if w != nil {
		fmt.Fprintf(w, "dprl: memory: %s: estimated %d bytes (%s) of the budget %d bytes (%s): %s\n", what, e.Bytes, Format(e.Bytes), b.Bytes, b.Source, e.Detail)
	}
	return nil
}

// report, when set (SetReport), receives the line of every passed check.
var report io.Writer

// SetReport makes every passed check write its estimate to w (nil: only with
// DPRL_MEMORY_REPORT=1, to standard error); tests read the estimates this way.
func SetReport(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	report = w
}

// Slice returns an upper bound of the bytes the Go allocator takes for n elements of size
// elem (size classes round small objects up by at most 1/8; large ones to whole 8 KiB pages).
func Slice(n, elem int64) int64 {
	b := mulSat(max(n, 0), elem)
	if b <= 32<<10 {
		return b + b/8 + 16
	}
	return addSat(b, 8<<10)
}

// Floats returns Slice(n, 8).
func Floats(n int64) int64 { return Slice(n, 8) }

// AppendGrown returns an upper bound of the peak bytes of building a slice of n elements of
// size elem by append: the final array (capacity at most 1.25·n for large slices) plus the
// array it was copied from during its last growth.
func AppendGrown(n, elem int64) int64 {
	return mulSat(Slice(n, elem), 9) / 4
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, n int64) int64 {
	if a == 0 || n == 0 {
		return 0
	}
	if a > math.MaxInt64/n {
		return math.MaxInt64
	}
	return a * n
}

// Mul and Add are saturating products and sums of byte counts (an estimate never wraps).
func Mul(a, n int64) int64 { return mulSat(a, n) }

// Add returns a + b, saturating.
func Add(a, b int64) int64 { return addSat(a, b) }

// collectAbove is the heap size above which LiveHeap collects garbage before measuring.
const collectAbove = 16 << 20

// LiveHeap returns an upper bound of the bytes of the live heap objects now (what a run has
// already allocated: its configuration, plan and environments). While the heap's objects,
// garbage not yet collected included, take at most 16 MiB, that is the bound (at most 16 MiB
// too many, against budgets of gigabytes); above it, they are measured after a garbage
// collection. A forced collection blocks for milliseconds, a large part of a small run.
func LiveHeap() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if b := int64(s[0].Value.Uint64()); b <= collectAbove {
		return b
	}
	runtime.GC()
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
