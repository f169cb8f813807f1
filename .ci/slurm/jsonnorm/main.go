// Command jsonnorm prints a JSON file with the fields that legitimately differ between two runs of
// the same configuration removed, so that .ci/slurm/dprl-e2e can compare a Slurm sweep's merged
// manifest with a one-machine run's byte for byte. It lives under .ci (ignored by ./...) and is run
// with `go run ./.ci/slurm/jsonnorm FILE` so CI needs neither jq nor python.
//
// Removed, at any depth: the command line ("command", "argv"), the worker count ("workers",
// "parallel"), input paths ("path": the inputs' SHA-256 stays), wall-clock and host fields (any
// key containing "wall", "seconds", "per_second" (a rate: episodes_per_second), "elapsed",
// "duration", "time", "started", "finished", "host"), and the sweep's own bookkeeping ("shard", "shards", "slurm"). Everything else, the
// configuration, seeds, input hashes, per-curve results and the file list with hashes, must match
// exactly. Output: keys sorted, two-space indent, one trailing
// newline.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// dropExact lists keys removed wherever they occur.
var dropExact = map[string]bool{
	"command": true, "argv": true, "workers": true, "parallel": true,
	"shard": true, "shards": true, "slurm": true, "path": true,
}

// dropSubstrings lists substrings that mark a key as volatile (compared case-insensitively).
var dropSubstrings = []string{"wall", "seconds", "per_second", "elapsed", "duration", "time", "started", "finished", "host"}

func volatile(key string) bool {
	k := strings.ToLower(key)
	if dropExact[k] {
		return true
	}
	for _, s := range dropSubstrings {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func strip(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if volatile(k) {
				delete(t, k)
				continue
			}
			t[k] = strip(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = strip(x)
		}
		return t
	default:
		return v
	}
}

func run(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out, err := json.MarshalIndent(strip(v), "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	_, err = os.Stdout.Write(append(out, '\n'))
	return err
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: jsonnorm FILE.json")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "jsonnorm:", err)
		os.Exit(1)
	}
}
