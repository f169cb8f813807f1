package rundirtest

import (
	"encoding/json"
	"testing"
)

// WriteJSON writes v as JSON to dir/name (a model or system file of a test, as WriteFile) and
// returns its path.
func WriteJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return WriteFile(t, dir, name, data)
}
