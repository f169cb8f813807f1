package strictdecode

import (
	"path/filepath"
	"strings"
)

// FormatOf returns the format a file's extension names, for Decode: "json", "yaml" or "yml"
// (any other extension, lowercased and without its dot, is refused by Decode).
func FormatOf(path string) string {
	return strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
}

// Load reads a file of at most MaxFileSize bytes (ReadFile) and parses it with parse in the
// format its extension names (FormatOf): a model loader's Load.
func Load[T any](path string, parse func(data []byte, format string) (T, error)) (T, error) {
	data, err := ReadFile(path)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(data, FormatOf(path))
}
