// Package docs holds dprl's documentation; its Go side embeds the published schemas so that
// the code that reads and tests them uses the very file the documentation publishes.
package docs

import _ "embed"

// RunDirectorySchema is run-directory.schema.json: the JSON Schema (draft 2020-12) of every
// run directory's manifest.json (docs/run-directory.md).
//
//go:embed run-directory.schema.json
var RunDirectorySchema []byte
