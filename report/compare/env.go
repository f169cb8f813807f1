package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dprl/dprl/internal/boundedread"
	"sigs.k8s.io/yaml"
)

// envIndex gives the environment of the curves of one run, from the cells of its
// config.resolved.yaml.
type envIndex struct {
	cells []envCell
}

// envCell is one cell: its name normalised (normName) and its environment ("" if unknown).
type envCell struct {
	norm, env string
}

// runEnvs reads dir/config.resolved.yaml; nil (no error) when the run has none.
func runEnvs(dir string) (*envIndex, error) {
	p := filepath.Join(dir, ResolvedConfigFile)
	data, err := boundedread.ReadFile(p, boundedread.DefaultLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, bad("compare: %v", err)
	}
	var doc struct {
		Family string `json:"family"`
		Cells  []struct {
			Cell string          `json:"cell"`
			Spec json.RawMessage `json:"spec"`
		} `json:"cells"`
	}
	// YAML (a run directory of dprl ≥ 2026-11-29) or JSON (earlier ones; JSON is YAML too).
	if data, err = yaml.YAMLToJSON(data); err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		return nil, bad("compare: %s: %v", p, err)
	}
	idx := &envIndex{}
	for _, c := range doc.Cells {
		idx.cells = append(idx.cells, envCell{norm: normName(c.Cell), env: specEnv(doc.Family, c.Spec)})
	}
	return idx, nil
}

// normName maps a cell or curve name to a form in which a cell's label and the file name the
// family derived from it agree: every character other than an ASCII letter, digit, '.' or '-'
// becomes '_' (the families replace spaces, '/', '=', parentheses and the like by '_').
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// of returns the environment of the curve called name: that of the cell of the same
// (normalised) name; otherwise that of the cells sharing the longest common prefix with it
// (the families name a curve's file after its cell, shortening parts of it), their
// environments joined with " + " when they differ. "" when the run does not say.
func (x *envIndex) of(name string) string {
	if x == nil || len(x.cells) == 0 {
		return ""
	}
	n := normName(name)
	for _, c := range x.cells {
		if c.norm == n {
			return c.env
		}
	}
	best := 0
	var envs []string
	for _, c := range x.cells {
		l := commonPrefix(c.norm, n)
		switch {
		case l > best:
			best, envs = l, []string{c.env}
		case l == best && l > 0:
			envs = append(envs, c.env)
		}
	}
	if best == 0 {
		for _, c := range x.cells {
			envs = append(envs, c.env)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range envs {
		if e == "" {
			return "" // a cell of unknown environment: the curve's is unknown
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " + ")
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// tabularFamilies are the families whose riverswim has the horizon as its only parameter
// (their resolved env may carry Garnet parameters that riverswim ignores).
var tabularFamilies = map[string]bool{"tabular": true, "practical-tabular": true}

// garnetKeys are the parameters of a tabular Garnet MDP.
var garnetKeys = []string{"states", "actions", "branching", "reward_density"}

// specEnv describes the environment of a cell from its resolved specification: the "env"
// object (kind or name, then the other parameters sorted), the LQ "system", or the horizon,
// Garnet and file fields of the practical tabular cells. "" when the specification does not
// say.
func specEnv(family string, spec json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "" // not an object (a family whose specifications are not JSON)
	}
	if env, ok := m["env"].(map[string]any); ok {
		kind, _ := env["kind"].(string)
		name, _ := env["name"].(string)
		if kind == "" {
			kind = name
		}
		params := map[string]any{}
		for k, v := range env {
			if k != "kind" && k != "name" {
				params[k] = v
			}
		}
		if tabularFamilies[family] && kind == "riverswim" {
			params = map[string]any{"horizon": env["horizon"]}
		}
		return describe(kind, params)
	}
	if sys, ok := m["system"]; ok {
		if s, ok := sys.(string); ok {
			return "LQ system " + s
		}
		b, _ := json.Marshal(sys)
		return "LQ system " + string(b)
	}
	h, ok := m["horizon"]
	if !ok {
		return ""
	}
	if g, ok := m["garnet"].(map[string]any); ok {
		params := map[string]any{"horizon": h, "env_seed": m["env_seed"]}
		for _, k := range garnetKeys {
			params[k] = g[k]
		}
		return describe("garnet", params)
	}
	if sha, ok := m["env_sha256"]; ok {
		return describe("file", map[string]any{"sha256": sha})
	}
	if _, ok := m["group"]; ok && tabularFamilies[family] {
		return describe("riverswim", map[string]any{"horizon": h})
	}
	return ""
}

// describe writes kind(k1=v1, k2=v2, …) with the parameters in sorted order.
func describe(kind string, params map[string]any) string {
	if kind == "" {
		kind = "env"
	}
	var keys []string
	for k, v := range params {
		if v != nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return kind
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		var v string
		switch x := params[k].(type) {
		case string:
			v = x
		case json.Number:
			v = x.String()
		default:
			b, _ := json.Marshal(x)
			v = string(b)
		}
		parts[i] = k + "=" + v
	}
	return fmt.Sprintf("%s(%s)", kind, strings.Join(parts, ", "))
}
