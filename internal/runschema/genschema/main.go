// Command genschema writes the published run-directory schema generated from the Go types
// (runschema.Schema) to the file named by its argument, atomically. docs/schema.go runs it:
// go generate ./docs.
package main

import (
	"fmt"
	"os"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/runschema"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: genschema FILE")
	}
	data, err := runschema.Schema()
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(args[0], data, 0o644)
}
