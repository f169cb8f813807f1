package runschema

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
)

// TestSchemaMatchesGoTypes: the published schema's per-curve record and manifest have exactly
// the keys engine.CurveRecord and engine.RunManifest write (every always-written key required).
func TestSchemaMatchesGoTypes(t *testing.T) {
	for _, c := range []struct {
		typ reflect.Type
		def string
	}{{reflect.TypeFor[engine.CurveRecord](), "curve"}, {reflect.TypeFor[engine.RunManifest](), ""}} {
		if err := CheckType(c.typ, c.def); err != nil {
			t.Errorf("%s: %v", c.typ, err)
		}
	}
}

// TestRecipeNewCurveField is ARCHITECTURE.md's "A new per-curve field" recipe: a field added
// to the per-curve record (here a fake record embedding engine.CurveRecord) fails the check
// naming the field and the schema file until the schema has it; a property the type does not
// write fails too.
func TestRecipeNewCurveField(t *testing.T) {
	type withField struct {
		engine.CurveRecord
		Median rundir.Number `json:"final_median"`
	}
	err := CheckType(reflect.TypeFor[withField](), "curve")
	if err == nil || !strings.Contains(err.Error(), "final_median: written by runschema.withField but not a property of $defs.curve in docs/run-directory.schema.json") {
		t.Errorf("a new field missing from the schema: %v", err)
	}
	type optional struct {
		engine.CurveRecord
		Note string `json:"note,omitempty"`
	}
	if err := CheckType(reflect.TypeFor[optional](), "curve"); err == nil || !strings.Contains(err.Error(), "note: written by") {
		t.Errorf("a new optional field missing from the schema: %v", err)
	}
	type fewer struct {
		Label string `json:"label"`
	}
	if err := CheckType(reflect.TypeFor[fewer](), "curve"); err == nil || !strings.Contains(err.Error(), "agent: a property of $defs.curve") {
		t.Errorf("a schema property the type does not write: %v", err)
	}
}
