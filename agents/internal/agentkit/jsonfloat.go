package agentkit

import (
	"encoding/json"
	"math"
)

// SpecialFloatJSON returns the JSON string form of a float64 that a JSON number cannot carry:
// "NaN", "+Inf", "-Inf" and, when negZero is set, "-0" for −0 (quotes included). ok is false
// for every other value, which marshals as a plain JSON number.
func SpecialFloatJSON(x float64, negZero bool) (b []byte, ok bool) {
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), true
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), true
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), true
	case negZero && x == 0 && math.Signbit(x):
		return []byte(`"-0"`), true
	}
	return nil, false
}

// FloatJSON is the JSON form of x: SpecialFloatJSON's string for a value a JSON number cannot
// carry, else the number.
func FloatJSON(x float64, negZero bool) ([]byte, error) {
	if b, ok := SpecialFloatJSON(x, negZero); ok {
		return b, nil
	}
	return json.Marshal(x)
}

// ParseSpecialFloatJSON is the inverse of SpecialFloatJSON: it returns the value of the JSON
// text b when b is exactly one of the strings SpecialFloatJSON writes ("-0" only with negZero);
// ok is false otherwise.
func ParseSpecialFloatJSON(b []byte, negZero bool) (x float64, ok bool) {
	switch string(b) {
	case `"NaN"`:
		return math.NaN(), true
	case `"+Inf"`:
		return math.Inf(1), true
	case `"-Inf"`:
		return math.Inf(-1), true
	case `"-0"`:
		return math.Copysign(0, -1), negZero
	}
	return 0, false
}
