package membudget

import (
	"fmt"
	"strings"
)

// YAMLNodeBytes bounds the memory of one node of a decoded YAML document: yaml.v3 builds the
// whole node tree (a yaml.Node of about 150 bytes, its strings and the parser's events)
// before it decodes into any value, measured at 195–220 bytes per node.
const YAMLNodeBytes = 256

// MaxConfigNodes bounds the nodes of a configuration document (YAMLNodes): a RunSpec with
// 10 000 seeds has about 20 000, the largest embedded reproduction a few thousand. It refuses,
// before the document is decoded, the multi-gigabyte node trees of a document under the
// 64 MiB file limit that lists millions of seeds.
const MaxConfigNodes = 1 << 20

// YAMLNodes returns an upper bound of the nodes yaml.v3 builds for the YAML (or JSON) document
// data, without decoding it, and the top-level key whose value holds the most of them ("" for
// none). Every node but a document's root is introduced by an indicator: a block sequence item
// by "-", a flow sequence item by "[" or ",", a mapping key and its value by ":" (an implicit
// null value by ",", "{" or "?"). So at most 1 per "-" and "[", 2 per ":", ",", "{" and "?",
// and 2 for the first document and after each "..." (a document node and its root; a later
// document otherwise starts with "---"):
// the characters are counted everywhere (in scalars and comments too),
// which only makes the bound larger.
func YAMLNodes(data []byte) (nodes int64, topKey string, topNodes int64) {
	nodes = 2
	per := map[string]int64{}
	key := ""
	lineStart := true
	for i, c := range data {
		if lineStart {
			lineStart = false
			if c == '.' && i+2 < len(data) && data[i+1] == '.' && data[i+2] == '.' {
				nodes += 2 // "..." ends a document: another may follow without "---"
			}
			if c != ' ' && c != '\t' && c != '-' && c != '#' && c != '\n' && c != '\r' {
				// A top-level key (or a scalar at column 0): the text before its ":".
				end := i
				for end < len(data) && data[end] != ':' && data[end] != '\n' && end-i < 64 {
					end++
				}
				if end < len(data) && data[end] == ':' {
					key = strings.Trim(string(data[i:end]), `"' `)
				}
			}
		}
		var w int64
		switch c {
		case '\n':
			lineStart = true
			continue
		case '-', '[':
			w = 1
		case ':', ',', '{', '?':
			w = 2
		default:
			continue
		}
		nodes += w
		per[key] += w
	}
	for k, n := range per {
		if k != "" && (n > topNodes || n == topNodes && k < topKey) {
			topKey, topNodes = k, n
		}
	}
	return nodes, topKey, topNodes
}

// YAMLEstimate is the memory of decoding data as YAML: its node tree and twice its bytes.
func YAMLEstimate(data []byte) Estimate {
	n, key, _ := YAMLNodes(data)
	lower := "the document's size"
	if key != "" {
		lower = "the length of " + key
	}
	ts := Terms{{What: fmt.Sprintf("YAML node tree of up to %d nodes", n), Bytes: Mul(n, YAMLNodeBytes), Lower: lower + "; large tables belong in JSON files, which are decoded without a node tree"},
		{What: "document text", Bytes: Mul(int64(len(data)), 2)}}
	return FromTerms(ts)
}

// CheckYAML refuses a YAML document whose decoding would exceed the budget (an *Error).
func CheckYAML(data []byte) error {
	return Check("decoding the YAML document", YAMLEstimate(data))
}

// CheckConfigYAML refuses a configuration document with more than MaxConfigNodes nodes
// (YAMLNodes) before it is decoded; the error names the top-level key that holds the most.
func CheckConfigYAML(data []byte) error {
	n, key, kn := YAMLNodes(data)
	if n <= MaxConfigNodes {
		return nil
	}
	where := "the document"
	if key != "" {
		where = fmt.Sprintf("%s (up to %d of them under %s:)", where, kn, key)
	}
	return fmt.Errorf("%s: up to %d YAML nodes in %s, more than the limit of %d for a configuration (decoding builds every node first, about %d bytes each; a seeds list holds at most 10000 seeds); shorten it",
		fieldOr(key), n, where, MaxConfigNodes, YAMLNodeBytes)
}

func fieldOr(key string) string {
	if key == "" {
		return "config"
	}
	return key
}
