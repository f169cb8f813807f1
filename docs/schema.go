// Package docs holds dprl's documentation; its Go side embeds the published schemas so that
// the code that reads and tests them uses the very file the documentation publishes.
package docs

import _ "embed"

// RunDirectorySchema is run-directory.schema.json: the JSON Schema (draft 2020-12) of every
// run directory's manifest.json (docs/run-directory.md), generated from the Go types
// (engine.RunManifest, engine.CurveRecord, ledger.Report) by internal/runschema: regenerate it
// with go generate ./docs; TestSchemaUpToDate fails while the committed file differs.
//
//go:generate go run github.com/dprl/dprl/internal/runschema/genschema run-directory.schema.json run-directory.md
//go:embed run-directory.schema.json
var RunDirectorySchema []byte
