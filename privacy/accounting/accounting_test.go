package accounting

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

var (
	_ Guarantee = PureDP{}
	_ Guarantee = ApproxDP{}
	_ Guarantee = ZCDP{}
)

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func TestConstructorsAccept(t *testing.T) {
	tests := []struct {
		name string
		mk   func() (Guarantee, error)
		want Guarantee
	}{
		{"pure", func() (Guarantee, error) { return NewPureDP(1.5) }, PureDP{1.5}},
		{"pure tiny", func() (Guarantee, error) { return NewPureDP(1e-300) }, PureDP{1e-300}},
		{"approx", func() (Guarantee, error) { return NewApproxDP(1, 1e-5) }, ApproxDP{1, 1e-5}},
		{"approx delta near 1", func() (Guarantee, error) { return NewApproxDP(3, 0.999) }, ApproxDP{3, 0.999}},
		{"zcdp", func() (Guarantee, error) { return NewZCDP(0.25) }, ZCDP{0.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := tt.mk()
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if g != tt.want {
				t.Fatalf("got %v, want %v", g, tt.want)
			}
		})
	}
}

func TestStringAndKind(t *testing.T) {
	tests := []struct {
		g          Guarantee
		str, kind  string
		jsonString string
	}{
		{PureDP{1}, "(eps=1)-DP", KindPureDP, `{"epsilon":1}`},
		{ApproxDP{0.5, 1e-5}, "(eps=0.5, delta=1e-05)-DP", KindApproxDP, `{"epsilon":0.5,"delta":0.00001}`},
		{ZCDP{0.125}, "(rho=0.125)-zCDP", KindZCDP, `{"rho":0.125}`},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			if got := tt.g.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := tt.g.Kind(); got != tt.kind {
				t.Errorf("Kind() = %q, want %q", got, tt.kind)
			}
			b, err := json.Marshal(tt.g)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.jsonString {
				t.Errorf("json = %s, want %s", b, tt.jsonString)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	type manifest struct {
		Neighbouring Neighbouring `json:"neighbouring"`
		Total        ApproxDP     `json:"total"`
		Inner        ZCDP         `json:"inner"`
	}
	in := manifest{ZeroOut, ApproxDP{2, 1e-6}, ZCDP{0.03}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"neighbouring":"zero-out","total":{"epsilon":2,"delta":0.000001},"inner":{"rho":0.03}}`
	if string(b) != want {
		t.Fatalf("json = %s, want %s", b, want)
	}
	var out manifest
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip = %+v, want %+v", out, in)
	}
	if err := out.Total.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"neighbouring":"sideways"}`), &out); err == nil {
		t.Fatal("expected error for unknown neighbouring")
	}
}

func TestNeighbouring(t *testing.T) {
	var zero Neighbouring
	if zero != ReplaceOne {
		t.Fatalf("zero value = %v, want ReplaceOne", zero)
	}
	tests := []struct {
		in      string
		want    Neighbouring
		wantErr bool
	}{
		{"replace-one", ReplaceOne, false},
		{"ReplaceOne", ReplaceOne, false},
		{"replace_one", ReplaceOne, false},
		{" REPLACE ", ReplaceOne, false},
		{"zero-out", ZeroOut, false},
		{"ZeroOut", ZeroOut, false},
		{"zero", ZeroOut, false},
		{"add/remove", ZeroOut, false},
		{"", 0, true},
		{"swap", 0, true},
		{"replace-two", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseNeighbouring(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "neighbouring") {
					t.Fatalf("ParseNeighbouring(%q) error = %v, want an error naming neighbouring", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseNeighbouring(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			back, err := ParseNeighbouring(got.String())
			if err != nil || back != got {
				t.Fatalf("String round trip: %v, %v", back, err)
			}
		})
	}
	if s := Neighbouring(7).String(); s != "Neighbouring(7)" {
		t.Errorf("invalid String() = %q", s)
	}
	if _, err := Neighbouring(7).MarshalText(); err == nil {
		t.Error("MarshalText of invalid value: want error")
	}
}

func TestZCDPToApproxDPKnown(t *testing.T) {
	tests := []struct {
		rho, delta, want float64
	}{
		{0.5, 1e-5, 0.5 + 2*math.Sqrt(0.5*math.Log(1e5))}, // ≈ 5.298
		{1, math.Exp(-1), 3},
		{0.01, math.Exp(-4), 0.01 + 2*0.1*2},
		{2, 0.5, 2 + 2*math.Sqrt(2*math.Ln2)},
	}
	for _, tt := range tests {
		got, err := ZCDP{tt.rho}.ToApproxDP(tt.delta)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got.Epsilon, tt.want) > 1e-14 || got.Delta != tt.delta {
			t.Errorf("ZCDP{%v}.ToApproxDP(%v) = %v, want eps %v", tt.rho, tt.delta, got, tt.want)
		}
	}
	got, _ := ZCDP{0.5}.ToApproxDP(1e-5)
	if math.Abs(got.Epsilon-5.298) > 1e-3 {
		t.Errorf("ZCDP{0.5}.ToApproxDP(1e-5) = %v, want ≈ 5.298", got.Epsilon)
	}
}

func TestZCDPForKnown(t *testing.T) {
	tests := []struct {
		eps, delta float64
	}{
		{1, 1e-5}, {0.5, 1e-6}, {8, 1e-3}, {2, 0.5},
	}
	for _, tt := range tests {
		l := math.Log(1 / tt.delta)
		want := math.Pow(math.Sqrt(l+tt.eps)-math.Sqrt(l), 2) // spec §1.4 printed form
		z, err := ZCDPFor(ApproxDP{tt.eps, tt.delta})
		if err != nil {
			t.Fatal(err)
		}
		if relErr(z.Rho, want) > 1e-12 {
			t.Errorf("ZCDPFor(%v, %v) = %v, want %v", tt.eps, tt.delta, z.Rho, want)
		}
	}
}

// Round trip ε(ρ(ε,δ), δ) = ε (privacy spec §1.4, §5.1), never above ε.
func TestZCDPRoundTrip(t *testing.T) {
	epss := []float64{1e-8, 1e-6, 1e-3, 0.01, 0.1, 0.5, 1, 2, 5, 10, 100, 1e4}
	deltas := []float64{1e-300, 1e-12, 1e-8, 1e-5, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.999999}
	for _, eps := range epss {
		for _, delta := range deltas {
			z, err := ZCDPFor(ApproxDP{eps, delta})
			if err != nil {
				t.Fatalf("ZCDPFor(%v, %v): %v", eps, delta, err)
			}
			back, err := z.ToApproxDP(delta)
			if err != nil {
				t.Fatalf("ToApproxDP: %v", err)
			}
			if relErr(back.Epsilon, eps) > 1e-12 {
				t.Errorf("eps=%v delta=%v: round trip %v (rel err %.3g)", eps, delta, back.Epsilon, relErr(back.Epsilon, eps))
			}
			if back.Epsilon > eps {
				t.Errorf("eps=%v delta=%v: round trip %v exceeds target", eps, delta, back.Epsilon)
			}
		}
	}
}

func TestPureConversions(t *testing.T) {
	tests := []struct {
		eps, rho float64
	}{
		{1, 0.5}, {0.1, 0.005}, {2, 2}, {1e-3, 5e-7},
	}
	for _, tt := range tests {
		if got := (PureDP{tt.eps}).ToZCDP(); relErr(got.Rho, tt.rho) > 1e-15 {
			t.Errorf("PureDP{%v}.ToZCDP() = %v, want %v", tt.eps, got.Rho, tt.rho)
		}
		a, err := PureDP{tt.eps}.ToApproxDP(1e-7)
		if err != nil || a != (ApproxDP{tt.eps, 1e-7}) {
			t.Errorf("PureDP{%v}.ToApproxDP(1e-7) = %v, %v", tt.eps, a, err)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1} {
		if got := (PureDP{bad}).ToZCDP(); !math.IsNaN(got.Rho) {
			t.Errorf("PureDP{%v}.ToZCDP() = %v, want NaN", bad, got.Rho)
		}
	}
}
