package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/internal/bounds"
)

func newListCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List each family's environments, agents (the papers' and dprl's practical ones), privacy settings and reproductions, and the limits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			writeList(stdout)
			return nil
		},
	}
}

// writeList writes `dprl list`: every family's catalogue (engine.Registry.List) with its
// reproductions, then the limits (bounds.WriteLimits).
func writeList(w io.Writer) {
	newRegistry().List(w)
	bounds.WriteLimits(w)
	fmt.Fprintln(w, "\nPrivacy audit: dprl audit --list | --all | --family <f> | <target>...")
}
