package main

import (
	"github.com/spf13/cobra"

	"github.com/dprl/dprl/internal/membudget"
)

// addMemoryFlag adds the global flag --memory to root and resolves the memory budget before
// every command (internal/membudget: --memory, else DPRL_MEMORY, else 3/4 of the physical
// memory or of the room RLIMIT_AS, RLIMIT_DATA or the cgroup leave). Runs estimated above the
// budget are refused with exit status 2 (membudget.Error), before they allocate.
func addMemoryFlag(root *cobra.Command) {
	var memory string
	root.PersistentFlags().StringVar(&memory, "memory", "",
		"memory budget, e.g. 3GiB or 512MiB (default: $DPRL_MEMORY, else 3/4 of the physical memory or of what RLIMIT_AS, RLIMIT_DATA or the cgroup leave); a run estimated above it is refused with exit status 2")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		b, err := membudget.Resolve(memory, root.PersistentFlags().Changed("memory"))
		if err != nil {
			return usageError{err}
		}
		membudget.Set(b)
		return nil
	}
}
