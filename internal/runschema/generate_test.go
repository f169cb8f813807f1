package runschema

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/docs"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
)

// TestSchemaUpToDate: the committed docs/run-directory.schema.json (embedded as
// docs.RunDirectorySchema) is the schema generated from engine.RunManifest and
// engine.CurveRecord, byte for byte; regenerate it with `go generate ./docs`.
func TestSchemaUpToDate(t *testing.T) {
	gen, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckUpToDate(docs.RunDirectorySchema, gen); err != nil {
		t.Fatal(err)
	}
	if _, err := CompileBytes(gen); err != nil {
		t.Fatalf("the generated schema does not compile: %v", err)
	}
}

// decode parses a schema for inspection.
func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// at walks a decoded schema along keys.
func at(t *testing.T, m any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		o, ok := m.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object", strings.Join(keys, "."))
		}
		if m, ok = o[k]; !ok {
			t.Fatalf("%s: no key %q", strings.Join(keys, "."), k)
		}
	}
	return m
}

func strs(vs ...string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// TestEnumsMatchConstants: the enum and const tags of the Go types name exactly the values
// their constants write.
func TestEnumsMatchConstants(t *testing.T) {
	gen, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	s := decode(t, gen)
	neighbouring := strs(accounting.ReplaceOne.String(), accounting.ZeroOut.String())
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"properties", "schema", "const"}, engine.RunSchema},
		{[]string{"$defs", "curve", "properties", "reference", "properties", "kind", "enum"}, strs(engine.RefUniform, engine.RefZero, engine.RefNone)},
		{[]string{"$defs", "privacy", "properties", "model", "enum"}, strs(ledger.JDP, ledger.LDP, ledger.None, ledger.NoiseOff)},
		{[]string{"$defs", "privacy", "properties", "neighbouring", "enum"}, neighbouring},
		{[]string{"$defs", "privacy", "properties", "guarantee", "enum"}, strs(accounting.KindGDP, accounting.KindPureDP, accounting.KindZCDP, ledger.Declared)},
		{[]string{"$defs", "privacy", "properties", "entries", "items", "properties", "mechanism", "enum"},
			strs(string(ledger.GaussianCounter), string(ledger.Gaussian), string(ledger.GaussianZCDP), string(ledger.Laplace))},
		{[]string{"$defs", "privacy", "properties", "entries", "items", "properties", "norm", "enum"}, strs(string(ledger.L1), string(ledger.L2))},
		{[]string{"$defs", "privacy", "properties", "entries", "items", "properties", "neighbouring", "enum"}, neighbouring},
	} {
		if got := at(t, s, c.path...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %v, the constants write %v", strings.Join(c.path, "."), got, c.want)
		}
	}
}

// TestPropertiesAreWhatJSONWrites: every key encoding/json writes for a filled manifest is a
// property of the generated schema, and every required key is written, for the real types and
// for a record that shadows and adds keys.
func TestPropertiesAreWhatJSONWrites(t *testing.T) {
	check := func(name string, schema []byte, value any) {
		s := decode(t, schema)
		var v map[string]any
		data, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		curve := v["curves"].([]any)[0].(map[string]any)
		for _, o := range []struct {
			where  string
			schema any
			value  map[string]any
		}{{"manifest", s, v}, {"curve", at(t, s, "$defs", "curve"), curve},
			{"privacy", at(t, s, "$defs", "privacy"), curve["privacy"].(map[string]any)}} {
			props := at(t, o.schema, "properties").(map[string]any)
			for k := range o.value {
				if _, ok := props[k]; !ok {
					t.Errorf("%s: %s: %q written, not a property", name, o.where, k)
				}
			}
			for _, k := range at(t, o.schema, "required").([]any) {
				if _, ok := o.value[k.(string)]; !ok {
					t.Errorf("%s: %s: %q required, not written", name, o.where, k)
				}
			}
		}
		sc, err := CompileBytes(schema)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateManifest(sc, data); err != nil {
			t.Errorf("%s: a manifest the type writes is invalid: %v", name, err)
		}
	}
	gen, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	m := sample()
	check("engine.RunManifest", gen, m.RunManifest)
	fake, err := Generate(reflect.TypeFor[withFieldManifest](), reflect.TypeFor[withField]())
	if err != nil {
		t.Fatal(err)
	}
	check("withFieldManifest", fake, m)
}

// withField is ARCHITECTURE.md's "A new per-curve field": the per-curve record with one more
// field, always written, and one optional field.
type withField struct {
	engine.CurveRecord
	// Median is the median over seeds of R(K).
	Median rundir.Number `json:"final_median"`
	// Note is a remark on the curve.
	Note string `json:"note,omitempty" jsonschema:"minLength=1"`
}

// withFieldManifest is the manifest whose curves are withField records.
type withFieldManifest struct {
	engine.RunManifest
	// Curves has one record per curve (CurveRecord, below).
	Curves []withField `json:"curves"`
}

// sample returns a manifest with one curve as WriteRun writes it.
func sample() withFieldManifest {
	nan := rundir.Number(math.NaN())
	rec := engine.CurveRecord{Label: "ucbvi", Agent: "ucbvi", Env: "riverswim", Epsilon: nan, Delta: nan,
		Episodes: 10, Seeds: []uint64{1}, CSV: "curves/riverswim/ucbvi.csv", FinalMean: 4, FinalLo: nan, FinalHi: nan,
		LastDecile: 0.5, Reference: engine.Reference{Kind: engine.RefUniform, RegretPerEpisode: 0.9},
		EpisodesPerSecond: 1e4, Privacy: ledger.Report{Model: ledger.None, PrivateAtNominal: true},
		Undefined: rundir.Undefined{"epsilon": "non-private curve"}, Extras: map[string]any{}}
	m := engine.RunManifest{Schema: engine.RunSchema, Provenance: rundir.Provenance{Inputs: []rundir.Input{}},
		Family: "tabular", Experiment: "run", Command: []string{"dprl", "run"}, Workers: 1,
		Curves: []engine.CurveRecord{rec}, Figures: []string{"regret-riverswim.png"},
		Files: []string{"curves/riverswim/ucbvi.csv"}, Extras: map[string]any{}}
	return withFieldManifest{RunManifest: m, Curves: []withField{{CurveRecord: rec, Median: 3.5}}}
}

// TestRecipeNewCurveField is ARCHITECTURE.md's "A new per-curve field" recipe: a field added
// to the per-curve record (here withField, a fake record embedding engine.CurveRecord) is a
// property of the generated schema's $defs.curve with no other edit (required unless
// omitempty, its constraint tag applied) and nothing else of the schema changes; the
// up-to-date check fails, naming the command, until the file is regenerated, and only the
// regenerated schema accepts the new manifests.
func TestRecipeNewCurveField(t *testing.T) {
	gen, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	fake, err := Generate(reflect.TypeFor[withFieldManifest](), reflect.TypeFor[withField]())
	if err != nil {
		t.Fatal(err)
	}
	s := decode(t, fake)
	props := at(t, s, "$defs", "curve", "properties").(map[string]any)
	if got, want := props["final_median"], map[string]any{"$ref": "#/$defs/number_or_null"}; !reflect.DeepEqual(got, want) {
		t.Errorf("final_median: %v, want %v", got, want)
	}
	if got, want := props["note"], map[string]any{"type": "string", "minLength": 1.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("note: %v, want %v", got, want)
	}
	req := at(t, s, "$defs", "curve", "required").([]any)
	if !slices.Contains(req, any("final_median")) || slices.Contains(req, any("note")) {
		t.Errorf("required %v: want final_median (always written), not note (omitempty)", req)
	}
	// Nothing else changes.
	delete(props, "final_median")
	delete(props, "note")
	at(t, s, "$defs", "curve").(map[string]any)["required"] = slices.DeleteFunc(req, func(k any) bool { return k == "final_median" })
	// (withFieldManifest's shadowing curves key comes last in encoding/json's order, hence in
	// required: compare it as a set.)
	want := decode(t, gen)
	for _, m := range []map[string]any{s, want} {
		m["required"] = slices.SortedFunc(slices.Values(m["required"].([]any)), func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("the new field changed more than its property:\n%s", fake)
	}

	// The documentation: the field's doc comment is its row of the per-curve table.
	root, page := runDirectoryPage(t)
	newPage, err := docTables(page, root, reflect.TypeFor[withFieldManifest](), reflect.TypeFor[withField]())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"| `final_median` | `final_median` is the median over seeds of R(K). |\n", "| `note` | `note` is a remark on the curve. |\n"} {
		if bytes.Contains(page, []byte(r)) || !bytes.Contains(newPage, []byte(r)) {
			t.Errorf("the regenerated page should add the row %q", r)
		}
	}

	err = CheckUpToDate(docs.RunDirectorySchema, fake)
	if err == nil || !strings.Contains(err.Error(), "run `go generate ./docs`") {
		t.Errorf("the committed schema without the field: %v", err)
	}
	if err := CheckUpToDate(fake, fake); err != nil {
		t.Errorf("regenerated: %v", err)
	}

	committed, err := Compile()
	if err != nil {
		t.Fatal(err)
	}
	regenerated, err := CompileBytes(fake)
	if err != nil {
		t.Fatal(err)
	}
	m := sample()
	with, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	without, err := json.Marshal(m.RunManifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateManifest(committed, with); err == nil {
		t.Error("the committed schema accepted a manifest with final_median")
	}
	if err := ValidateManifest(regenerated, with); err != nil {
		t.Errorf("the regenerated schema refused the new manifest: %v", err)
	}
	if err := ValidateManifest(regenerated, without); err == nil {
		t.Error("the regenerated schema accepted a curve without final_median")
	}
	m.Curves[0].Note = ""
	m.Curves[0].Median = 1
	if data, _ := json.Marshal(m); ValidateManifest(regenerated, data) != nil {
		t.Error("the regenerated schema refused a curve without the optional note")
	}
}

// TestGenerateRefuses: the generator refuses what it cannot describe exactly, naming it.
func TestGenerateRefuses(t *testing.T) {
	type curve struct {
		Label string `json:"label"`
	}
	type selfMarshal struct {
		Label        string                  `json:"label"`
		Neighbouring accounting.Neighbouring `json:"neighbouring"`
	}
	type pointer struct {
		Label *string `json:"label"`
	}
	type badTag struct {
		Label string `json:"label" jsonschema:"minLen=1"`
	}
	type badNumber struct {
		N float64 `json:"n" jsonschema:"minimum=x"`
	}
	type minItemsOnString struct {
		Label string `json:"label" jsonschema:"minItems=1"`
	}
	type Inner struct{ Label string }
	type Other struct{ Label string }
	type ambiguous struct {
		Inner
		Other
	}
	type constrainedMap struct {
		M map[string]string `json:"m" jsonschema:"minLength=1"`
	}
	for _, c := range []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"a type that marshals itself", reflect.TypeFor[selfMarshal](), "writes its own JSON"},
		{"a pointer", reflect.TypeFor[pointer](), "does not describe a ptr"},
		{"an unknown keyword", reflect.TypeFor[badTag](), `bad keyword "minLen=1"`},
		{"a bad number", reflect.TypeFor[badNumber](), `bad keyword "minimum=x"`},
		{"minItems on a string", reflect.TypeFor[minItemsOnString](), "minItems on string"},
		{"two fields writing one key", reflect.TypeFor[ambiguous](), `two fields write the key "Label"`},
		{"constraints on a map", reflect.TypeFor[constrainedMap](), "takes no jsonschema constraints"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Generate(c.typ, reflect.TypeFor[curve]())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := Generate(reflect.TypeFor[string](), reflect.TypeFor[curve]()); err == nil {
		t.Error("a manifest type that is not a struct was accepted")
	}
}

// TestFieldsFollowEncodingJSON: the generator's keys are encoding/json's: a shallower field
// shadows an embedded one, a tagged field wins over an untagged one at the same depth, "-"
// and unexported fields are skipped.
func TestFieldsFollowEncodingJSON(t *testing.T) {
	type Embedded struct {
		A string `json:"a"`
		B string
		C string `json:"c"`
	}
	type outer struct {
		Embedded
		A      int    `json:"a"`
		B      string `json:"B"`
		Skip   string `json:"-"`
		hidden string
		D      string `json:"d,omitempty"`
	}
	_ = outer{}.hidden
	fs, err := fields(reflect.TypeFor[outer]())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.key+map[bool]string{true: "?", false: ""}[f.omitempty])
	}
	data, err := json.Marshal(outer{D: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	written := slices.Sorted(func(yield func(string) bool) {
		for k := range v {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"c", "a", "B", "d?"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if want := []string{"B", "a", "c", "d"}; !reflect.DeepEqual(written, want) {
		t.Errorf("encoding/json wrote %v, want %v", written, want)
	}
	if v["a"] != 0.0 {
		t.Errorf("encoding/json wrote a = %v: the outer int shadows the embedded string", v["a"])
	}
}

// TestRunDirectoryDocNamesEveryKey: docs/run-directory.md's tables of the manifest's keys and
// of the per-curve keys name exactly the schema's properties.
func TestRunDirectoryDocNamesEveryKey(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "run-directory.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := decode(t, docs.RunDirectorySchema)
	for _, c := range []struct {
		heading string // the line before the table
		schema  any
	}{{"Top-level keys, the same for every family", s}, {"Per curve, the same keys", at(t, s, "$defs", "curve")}} {
		var keys []string
		lines := strings.Split(string(doc), "\n")
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, c.heading) })
		if i < 0 {
			t.Fatalf("docs/run-directory.md: no line starting %q", c.heading)
		}
		for _, l := range lines[i+1:] {
			if l == "" && keys != nil {
				break
			}
			cells := strings.Split(l, "|")
			if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
				continue
			}
			for _, k := range strings.Split(cells[1], ",") {
				if k = strings.Trim(strings.TrimSpace(k), "`"); k != "" && k != "key" {
					keys = append(keys, k)
				}
			}
		}
		var props []string
		for k := range at(t, c.schema, "properties").(map[string]any) {
			props = append(props, k)
		}
		slices.Sort(keys)
		slices.Sort(props)
		if !slices.Equal(keys, props) {
			t.Errorf("docs/run-directory.md, the table after %q names %v; the schema's properties are %v", c.heading, keys, props)
		}
	}
}

// TestDocTablesUpToDate: docs/run-directory.md's two key tables are what `go generate ./docs`
// writes from the types' doc comments.
func TestDocTablesUpToDate(t *testing.T) {
	root, doc := runDirectoryPage(t)
	got, err := DocTables(doc, root)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, doc) {
		t.Errorf("docs/run-directory.md's key tables differ from the Go types' doc comments; run `%s`", RegenerateCommand)
	}
}

// undocumented has a per-curve field without a doc comment.
type undocumented struct {
	engine.CurveRecord
	Median rundir.Number `json:"final_median"`
}

// TestDocTablesRefuseUndocumented: a field without a doc comment (and not in the group of the
// field above it) is an error naming it, never an empty row.
func TestDocTablesRefuseUndocumented(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(beginManifestTable + "\n" + endTable + "\n" + beginCurveTable + "\n" + endTable + "\n")
	_, err = docTables(doc, root, reflect.TypeFor[engine.RunManifest](), reflect.TypeFor[undocumented]())
	if err == nil || !strings.Contains(err.Error(), "undocumented.Median: no doc comment") {
		t.Errorf("got %v", err)
	}
	if _, err := DocTables([]byte("# no tables\n"), root); err == nil || !strings.Contains(err.Error(), "no line") {
		t.Errorf("a page without markers: %v", err)
	}
}

// runDirectoryPage returns the module's root and the committed docs/run-directory.md.
func runDirectoryPage(t *testing.T) (string, []byte) {
	t.Helper()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "run-directory.md"))
	if err != nil {
		t.Fatal(err)
	}
	return root, page
}
