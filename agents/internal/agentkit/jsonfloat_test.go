package agentkit

import (
	"math"
	"testing"
)

// TestFloatJSON: FloatJSON writes the special values as strings ("-0" only with negZero) and
// every other value as a JSON number, and ParseSpecialFloatJSON reads the strings back.
func TestFloatJSON(t *testing.T) {
	for _, c := range []struct {
		x       float64
		negZero bool
		want    string
		special bool
	}{
		{math.NaN(), false, `"NaN"`, true}, {math.Inf(1), false, `"+Inf"`, true}, {math.Inf(-1), true, `"-Inf"`, true},
		{math.Copysign(0, -1), true, `"-0"`, true}, {math.Copysign(0, -1), false, `-0`, false}, {1.5, true, `1.5`, false},
	} {
		b, err := FloatJSON(c.x, c.negZero)
		if err != nil || string(b) != c.want {
			t.Errorf("FloatJSON(%v, %v) = %s, %v; want %s", c.x, c.negZero, b, err, c.want)
		}
		x, ok := ParseSpecialFloatJSON(b, c.negZero)
		if ok != c.special || ok && math.Float64bits(x) != math.Float64bits(c.x) && !(math.IsNaN(x) && math.IsNaN(c.x)) {
			t.Errorf("ParseSpecialFloatJSON(%s, %v) = %v, %v", b, c.negZero, x, ok)
		}
	}
}
