package main

import (
	"fmt"
	"io"
	"strings"

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

// writeList writes `dprl list`: every family's catalogue (engine.Family.Catalogue, in the
// layout of engine.Listing) with its reproductions, then the limits (package internal/bounds).
func writeList(w io.Writer) {
	newRegistry().List(w)
	fmt.Fprintln(w, "\n== Limits (every family, every layer: flags, configurations, agents) ==")
	for _, l := range bounds.Limits() {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-24s %-24s %s", l.Quantity, l.Bound, l.Note), " "))
	}
	fmt.Fprintln(w, "\nPrivacy audit: dprl audit --list | --all | --family <f> | <target>...")
}
