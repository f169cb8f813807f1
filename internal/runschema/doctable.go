package runschema

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/dprl/dprl/experiment/engine"
)

// Markers around the generated key tables of docs/run-directory.md. The text between a begin
// marker and the end marker after it is the table; everything else of the page is prose.
const (
	beginManifestTable = "<!-- generated from engine.RunManifest by go generate ./docs: do not edit -->"
	beginCurveTable    = "<!-- generated from engine.CurveRecord by go generate ./docs: do not edit -->"
	endTable           = "<!-- end of generated table -->"
)

// DocTables returns docs/run-directory.md with its two key tables (the manifest's top-level
// keys, the per-curve keys) regenerated from the Go types engine.RunManifest and
// engine.CurveRecord: one row per group of fields (Go's convention: a doc comment above a
// field covers the fields on the lines right below it that have none), the keys as
// encoding/json writes them, the doc comment as the text with the group's Go field names
// replaced by their keys. root is the module's root directory, whose sources hold the doc
// comments.
func DocTables(doc []byte, root string) ([]byte, error) {
	return docTables(doc, root, reflect.TypeFor[engine.RunManifest](), reflect.TypeFor[engine.CurveRecord]())
}

// docTables is DocTables for the given manifest and per-curve types.
func docTables(doc []byte, root string, manifest, curve reflect.Type) ([]byte, error) {
	src := &sources{root: root, structs: map[string]*ast.StructType{}}
	for _, c := range []struct {
		begin string
		t     reflect.Type
	}{{beginManifestTable, manifest}, {beginCurveTable, curve}} {
		rows, err := src.rows(c.t)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteString(c.begin + "\n\n| key | |\n|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| `%s` | %s |\n", strings.Join(r.keys, "`, `"), strings.ReplaceAll(r.text, "|", `\|`))
		}
		b.WriteString("\n" + endTable)
		i := bytes.Index(doc, []byte(c.begin))
		if i < 0 {
			return nil, fmt.Errorf("run-directory doc: no line %q", c.begin)
		}
		j := bytes.Index(doc[i:], []byte(endTable))
		if j < 0 {
			return nil, fmt.Errorf("run-directory doc: no line %q after %q", endTable, c.begin)
		}
		doc = append(doc[:i:i], append([]byte(b.String()), doc[i+j+len(endTable):]...)...)
	}
	return doc, nil
}

// ModuleRoot returns the directory of the go.mod above dir (dir itself included).
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

// row is one row of a key table: a group of fields and its doc comment.
type row struct {
	keys []string
	text string
}

// sources reads the doc comments of struct types from the module's source files.
type sources struct {
	root    string
	module  string
	structs map[string]*ast.StructType // "pkgpath.Name"
	fset    *token.FileSet
	parsed  map[string]bool // package paths read
}

// rows returns the rows of the struct type t, embedded structs' fields in their place (as
// encoding/json promotes them); a key an outer field shadows is left out.
func (s *sources) rows(t reflect.Type) ([]row, error) {
	var rows []row
	outer := map[string]bool{} // the outer struct's own keys, which shadow embedded ones
	for _, f := range jsonFields(t) {
		outer[f.key] = !f.embedded
	}
	var walk func(t reflect.Type, depth int) error
	walk = func(t reflect.Type, depth int) error {
		st, err := s.structType(t)
		if err != nil {
			return err
		}
		docs, err := s.fieldDocs(t, st)
		if err != nil {
			return err
		}
		cur := -1 // the row of the current group
		for _, f := range jsonFields(t) {
			if f.embedded {
				cur = -1
				if err := walk(f.Type, depth+1); err != nil {
					return err
				}
				continue
			}
			if d := docs[f.Name]; d.text != "" || cur < 0 {
				rows = append(rows, row{text: d.text})
				cur = len(rows) - 1
			}
			if depth > 0 && outer[f.key] {
				continue // shadowed by a field of the outer struct
			}
			rows[cur].keys = append(rows[cur].keys, f.key)
			rows[cur].text = replaceFirst(rows[cur].text, f.Name, "`"+f.key+"`")
		}
		return nil
	}
	if err := walk(t, 0); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(r row) bool { return len(r.keys) == 0 }), nil
}

// jsonField is a field encoding/json writes: under its key, or (embedded) an embedded
// struct whose fields it promotes.
type jsonField struct {
	reflect.StructField
	key      string
	embedded bool
}

// jsonFields returns the fields of the struct type t that encoding/json writes, in order.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || key == "-":
		case f.Anonymous && key == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonField{StructField: f, embedded: true})
		case key == "":
			out = append(out, jsonField{StructField: f, key: f.Name})
		default:
			out = append(out, jsonField{StructField: f, key: key})
		}
	}
	return out
}

// replaceFirst replaces the first whole-word occurrence of word in text (a field's Go name
// where its doc comment introduces it) by with.
func replaceFirst(text, word, with string) string {
	loc := regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`).FindStringIndex(text)
	if loc == nil {
		return text
	}
	return text[:loc[0]] + with + text[loc[1]:]
}

// fieldDoc is a field's doc comment, on one line.
type fieldDoc struct{ text string }

// fieldDocs returns the doc comments of t's fields by field name; a field without one must sit
// on the line right below a field of its group.
func (s *sources) fieldDocs(t reflect.Type, st *ast.StructType) (map[string]fieldDoc, error) {
	out := map[string]fieldDoc{}
	prevEnd := -1
	for _, f := range st.Fields.List {
		line := s.fset.Position(f.Pos()).Line
		text := strings.Join(strings.Fields(f.Doc.Text()), " ")
		if text == "" && line != prevEnd+1 {
			name := "(embedded)"
			if len(f.Names) > 0 {
				name = f.Names[0].Name
			}
			if len(f.Names) > 0 && ast.IsExported(name) {
				return nil, fmt.Errorf("%s.%s: no doc comment (docs/run-directory.md's tables are the fields' doc comments)", t, name)
			}
		}
		for _, n := range f.Names {
			out[n.Name] = fieldDoc{text: text}
			text = ""
		}
		prevEnd = -1
		if len(f.Names) > 0 { // a group continues below a named field only
			prevEnd = s.fset.Position(f.End()).Line
		}
	}
	return out, nil
}

// structType returns the declaration of the named struct type t, parsing its package's source
// files (tests included) on first use.
func (s *sources) structType(t reflect.Type) (*ast.StructType, error) {
	pkg := strings.TrimSuffix(t.PkgPath(), "_test")
	if st, ok := s.structs[pkg+"."+t.Name()]; ok {
		return st, nil
	}
	if s.fset == nil {
		s.fset = token.NewFileSet()
		s.parsed = map[string]bool{}
		mod, err := os.ReadFile(filepath.Join(s.root, "go.mod"))
		if err != nil {
			return nil, err
		}
		m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(mod)
		if m == nil {
			return nil, fmt.Errorf("%s: no module line", filepath.Join(s.root, "go.mod"))
		}
		s.module = string(m[1])
	}
	if !s.parsed[pkg] {
		s.parsed[pkg] = true
		rel, ok := strings.CutPrefix(pkg, s.module)
		if !ok {
			return nil, fmt.Errorf("%s: not in module %s", t, s.module)
		}
		dir := filepath.Join(s.root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, name := range files {
			f, err := parser.ParseFile(s.fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if st, ok := ts.Type.(*ast.StructType); ok {
						s.structs[pkg+"."+ts.Name.Name] = st
					}
				}
				return true
			})
		}
	}
	st, ok := s.structs[pkg+"."+t.Name()]
	if !ok {
		return nil, fmt.Errorf("%s: no struct declaration in the sources of %s", t, pkg)
	}
	return st, nil
}
