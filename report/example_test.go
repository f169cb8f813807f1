package report_test

import (
	"fmt"
	"math"
	"os"

	"github.com/dprl/dprl/report"
)

// ExampleMeanBand summarises three seeds' cumulative regret over four
// episodes with a 95% Student-t confidence band.
func ExampleMeanBand() {
	runs := [][]float64{
		{1, 2.0, 2.5, 3.0},
		{1, 1.5, 2.0, 2.5},
		{1, 2.5, 3.5, 4.0},
	}
	band, err := report.MeanBand(runs, 0.95)
	if err != nil {
		fmt.Println(err)
		return
	}
	for t := range band.Mean {
		fmt.Printf("t=%d mean=%.3f sd=%.3f ci=[%.3f, %.3f]\n", t, band.Mean[t], band.SD[t], band.Lo[t], band.Hi[t])
	}
	fmt.Println("runs:", band.N)
	// Output:
	// t=0 mean=1.000 sd=0.000 ci=[1.000, 1.000]
	// t=1 mean=2.000 sd=0.500 ci=[0.758, 3.242]
	// t=2 mean=2.667 sd=0.764 ci=[0.769, 4.564]
	// t=3 mean=3.167 sd=0.764 ci=[1.269, 5.064]
	// runs: 3
}

// ExampleGrowthExponent estimates the exponent of √T-like regret.
func ExampleGrowthExponent() {
	var x, y []float64
	for T := 1; T <= 10000; T *= 10 {
		x = append(x, float64(T))
		y = append(y, 4*math.Sqrt(float64(T)))
	}
	slope, err := report.GrowthExponent(x, y, 10, 10000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("regret grows like T^%.2f\n", slope)
	// Output: regret grows like T^0.50
}

// ExampleWriteMarkdownTable prints a small results table.
func ExampleWriteMarkdownTable() {
	err := report.WriteMarkdownTable(os.Stdout,
		[]string{"agent", "final regret"},
		[][]string{{"DP-UCBVI", "812.4"}, {"UCBVI", "355"}})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// | agent    | final regret |
	// | -------- | -----------: |
	// | DP-UCBVI |        812.4 |
	// | UCBVI    |          355 |
}
