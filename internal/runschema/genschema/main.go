// Command genschema writes the published run-directory schema generated from the Go types
// (runschema.Schema) to the file named by its first argument, and regenerates the key tables
// of the Markdown page named by its second (runschema.DocTables: the types' doc comments),
// both atomically. docs/schema.go runs it: go generate ./docs.
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
	if len(args) != 2 {
		return fmt.Errorf("usage: genschema SCHEMA.json PAGE.md")
	}
	data, err := runschema.Schema()
	if err != nil {
		return err
	}
	root, err := runschema.ModuleRoot(".")
	if err != nil {
		return err
	}
	page, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	page, err = runschema.DocTables(page, root)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(args[0], data, 0o644); err != nil {
		return err
	}
	return atomicfile.WriteBytes(args[1], page, 0o644)
}
