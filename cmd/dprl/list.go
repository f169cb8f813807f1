package main

import (
	"fmt"
	"io"
	"strings"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	explin "github.com/dprl/dprl/experiment/linmdp"
	lmexp "github.com/dprl/dprl/experiment/linmix"
	explq "github.com/dprl/dprl/experiment/lq"
)

// The provenance labels of `dprl list`: every agent is either from the papers or one of
// dprl's own practical agents (private exactly as claimed, no regret proof).
const (
	labelPaper     = "[paper]"
	labelPractical = "[practical (dprl's own)]"
)

// agentLine prints one agent: its name, its provenance label and a description.
func agentLine(w io.Writer, name, desc string) {
	label := labelPaper
	if strings.HasPrefix(name, "practical") {
		label = labelPractical
	}
	fmt.Fprintf(w, "  %-28s %-25s %s\n", name, label, desc)
}

// writeList writes `dprl list`. The agent lists are built from the names each family's runner
// accepts (tabular registry and practical registry, explin.AgentNames, lmexp.AgentNames,
// explq.AgentNames), so a new agent cannot be missing from it (TestListEveryAgent).
func writeList(w io.Writer) {
	fmt.Fprintln(w, "Agents are labelled "+labelPaper+" (an algorithm from the papers) or "+labelPractical+
		" (dprl's own practical agent: private exactly as claimed, no regret proof).")
	fmt.Fprintln(w, "\n== Tabular MDPs ==\nEnvironments:")
	fmt.Fprintln(w, "  riverswim   RiverSwim (Osband et al. 2013 episodic variant, as in Chowdhury & Zhou 2021 and Qiao & Wang 2023): S=6, A=2, default H=20")
	fmt.Fprintln(w, "  garnet      seeded random Garnet-style MDP (--states, --actions, --branching, --reward-density, --env-seed)")
	fmt.Fprintln(w, "  file        an MDP loaded from a JSON or YAML file (--env-file)")
	fmt.Fprintln(w, "Agents (dprl run --agent; the practical ones with dprl run --family practical-tabular or dprl reproduce practical-tabular):")
	for _, a := range agents.Agents() {
		agentLine(w, a.Name, a.Description)
	}
	for _, a := range agents.PracticalAgents() {
		agentLine(w, a.Name, a.Description)
	}
	fmt.Fprintln(w, "Privatizers:")
	fmt.Fprintln(w, "  identity    non-private: exact counts (E = 0)")
	fmt.Fprintln(w, "  central     ε-JDP: Laplace binary-mechanism counters on N_h(s,a), N_h(s,a,s'), R_h(s,a) (Qiao & Wang §5.1)")
	fmt.Fprintln(w, "  local       ε-LDP: Laplace noise on each user's own indicators, on the user's side (Qiao & Wang §5.2)")
	fmt.Fprintln(w, "Calibrations (--calibration, curves[].calibration): exact (default; JDP b = 6HL/ε, LDP 6H/ε), paper (3HL/ε, 3H/ε:")
	fmt.Fprintln(w, "  ε under add/remove neighbours, 2ε under replace-one), unit (1/ε: NOT ε-private; outputs state the effective ε)")
	fmt.Fprintln(w, "Bonus presets (--preset): theory (the paper's constants, eq. (31)), practical (tabular spec §2.6)")

	fmt.Fprintln(w, "\n== Linear MDPs ==")
	fmt.Fprintln(w, "Environments (dprl reproduce linear-mdp; config envs[].kind):")
	fmt.Fprintln(w, "  latentriver     E2 LatentRiver(m, M): d = m latent levels, N = mM states, A = 3 (spec §6.4); default m=5, M=10, H=20")
	fmt.Fprintln(w, "  riverswim       E1 RiverSwim-OneHot(n): tabular chain with one-hot features, d = 2n (spec §6.3); default n=6, H=20")
	fmt.Fprintln(w, "  randomsimplex   E3 seeded random simplex linear MDP (N, A, d, seed; spec §6.5)")
	fmt.Fprintln(w, "  twostate100     TwoState-100: 2 states, 100 actions with random sign features, d = 10")
	fmt.Fprintln(w, "  file            a linear MDP (features, mu, theta, init) from a JSON/YAML file")
	fmt.Fprintln(w, "Agents (config agents[]; each private agent's calibration is fixed by its name):")
	for _, n := range explin.AgentNames() {
		d := linMDPAgents[n]
		if c := explin.AgentCalibration(n); c != "" {
			d += "; calibration " + c
		}
		agentLine(w, n, d)
	}

	fmt.Fprintln(w, "\n== Linear mixture MDPs ==")
	fmt.Fprintln(w, "Environments (dprl reproduce linear-mixture; linear-mixture spec §7):")
	fmt.Fprintln(w, "  two-state-hard   S={x0,x1}, A={±1}^{d-1}, P(x1|x0,a)=q+⟨μ,a⟩ (spec §7.1; default d=5, H=10, q=0.1, ρ=0.5)")
	fmt.Fprintln(w, "  hard-to-learn    Zhou, Gu & Szepesvári (2021) instance as in the public LDP-UCRL-VTR code: S=H+2, A=2^{d-1}, seeded")
	fmt.Fprintln(w, "  riverswim        RiverSwim viewed as a linear mixture, d=S²A (spec §7.2)")
	fmt.Fprintln(w, "  base-mixture     mixture of d seeded base kernels (spec §7.3)")
	fmt.Fprintln(w, "  file             a linear mixture MDP from JSON/YAML (model/linmix/testdata/tiny.yaml)")
	fmt.Fprintln(w, "Agents (config curves[].algorithm/mode):")
	for _, n := range lmexp.AgentNames() {
		alg, mode, _ := strings.Cut(n, "/")
		agentLine(w, n, linMixAlgorithms[alg]+linMixModes[mode])
	}
	fmt.Fprintln(w, "Calibrations (curves[].calibration, private ucrl-vtr): "+lmexp.CalibrationNames+
		" (paper: Luyo et al. Cor. 5/6, default; laplace: pure ε-DP, constants DERIVED in the spec §3.5; zcdp: spec P7, DERIVED)")

	fmt.Fprintln(w, "\n== Linear-quadratic control (Chowdhury, Zhou & Shroff; lq spec) ==")
	fmt.Fprintln(w, "  system lq-e1        reference LQ system LQ-E1: n=2, d=1, H=10, Rademacher noise ‖w‖=0.2 (lq spec §5.1)")
	fmt.Fprintln(w, "  system <file>       an LQ system from a YAML/JSON file (model/lq Config; e.g. model/lq/testdata/lqe1.yaml)")
	fmt.Fprintln(w, "Agents (dprl run --family lq / dprl reproduce lq; the practical ones with dprl run --family practical-lq or dprl reproduce practical-lq):")
	for _, n := range explq.AgentNames() {
		agentLine(w, n, lqAgents[n])
	}
	fmt.Fprintln(w, "Calibrations (config calibration): "+explq.CalibrationNames+" (exact ρ*, default; paper: the paper's σ, which overspends ε)")

	fmt.Fprintln(w, "\n== Calibration names (every family; package experiment/calibration) ==")
	for _, n := range calibration.Names() {
		fmt.Fprintf(w, "  %-8s %s\n", n, calibration.Describe(n))
	}
	fmt.Fprintln(w, "  (strict is the old name of exact and is still accepted)")

	writeSpecEnvs(w, newRegistry())

	var names []string
	for _, c := range reproductions(io.Discard, io.Discard) {
		names = append(names, c.Name())
	}
	fmt.Fprintln(w, "\nReproductions (dprl reproduce <name>): "+strings.Join(names, ", "))
	fmt.Fprintln(w, "Privacy audit: dprl audit --list | --all | --family <f> | <target>...")
}

// writeSpecEnvs lists, per family, the environments of the shared run schema with their
// env.params names (--env, --env-param), from the families themselves.
func writeSpecEnvs(w io.Writer, r *engine.Registry) {
	fmt.Fprintln(w, "\n== Shared run schema (dprl run --family F --env NAME --env-param K=V …; docs/engine.md) ==")
	for _, n := range r.Names() {
		f, _ := r.Lookup(n)
		l, ok := f.(engine.SpecEnvLister)
		if !ok {
			continue
		}
		var envs []string
		for i, e := range l.SpecEnvs() {
			s := e.Name
			if len(e.Params) > 0 {
				s += "(" + strings.Join(e.Params, ", ") + ")"
			}
			if e.Name == "file" {
				s += "(--env-file)"
			}
			if i == 0 {
				s += " [default]"
			}
			envs = append(envs, s)
		}
		fmt.Fprintf(w, "  %-18s %s\n", n, strings.Join(envs, "; "))
	}
}

// linMDPAgents describes the linear-MDP agents (experiment/linmdp agent names).
var linMDPAgents = map[string]string{
	"lsvi-ucb":                "LSVI-UCB (Jin et al. 2020), refit every episode, non-private",
	"ngo":                     "Private LSVI-UCB with low switching (Ngo, Vietri & Wu 2022, Alg. 1), ρ-zCDP → (ε,δ)-JDP with the spec's corrected constants [S]",
	"ngo-printed":             "ngo with the printed constants [P]: NOT private at the nominal ε (prints its effective ε)",
	"rare-switch":             "ngo with noise off (LSVI-UCB-RareSwitch), non-private",
	"rare-switch-reg":         "rare-switch with ngo's regulariser λ = 2λ̃_Λ at the given ε, non-private (separates regulariser from noise)",
	"luyo-batched":            "privacy-preserving batched LSVI-UCB (Luyo et al. 2021, Alg. 2, App. E.1, c_K = dΥ), (ε,δ)-JDP",
	"luyo-zcdp":               "luyo-batched with the spec's zCDP recalibration (§4.6, not in the paper)",
	"batch-twin":              "luyo-batched with noise off (LSVI-UCB-Batch), non-private",
	"luyo-nonbatched":         "Luyo et al.'s non-batched variant (B = K, Remarks 3 and 7), (ε,δ)-JDP",
	"practical-lsvi":          "practical private LSVI-UCB, low switching, Gaussian continual counters, exact μ-GDP accounting, (ε,δ)-JDP",
	"practical-lsvi-batched":  "practical-lsvi updating its policy at every release (a data-independent batch schedule) instead of low switching",
	"practical-rare-switch":   "practical-lsvi's non-private twin (exact statistics, same schedule)",
	"practical-batch-twin":    "practical-lsvi-batched's non-private twin",
	"practical-lsvi-noiseoff": "practical-lsvi on exact statistics with the private agent's regulariser and widths (separates the cost of the noise)",
	"practical-lsvi-theory":   "practical-lsvi with the theory constants (c_β = 1)",
}

// linMixAlgorithms and linMixModes describe the linear-mixture algorithm/mode pairs.
var linMixAlgorithms = map[string]string{
	"ucrl-vtr":               "UCRL-VTR (Ayoub et al.; private versions Luyo et al. Alg. 1, Cor. 5/6 constants)",
	"ucrl-vtr+":              "UCRL-VTR+ (variance-aware; private versions Luyo et al. Alg. 3, RECONSTRUCTED in the spec §4, Cor. 10/11)",
	"linopt-vi":              "Zhou's (Private-)LinOpt-VI, four counters per step (LDP version DERIVED, spec §5.7)",
	"linopt-po":              "Zhou's (Private-)LinOpt-PO, softmax mirror-descent policy (LDP DERIVED)",
	lmexp.PracticalAlgorithm: "practical private UCRL-VTR: Gaussian factorisation counters, exact μ-GDP accounting",
}

var linMixModes = map[string]string{
	"none": ", non-private",
	"jdp":  ", (ε,δ)-JDP (central noise)",
	"ldp":  ", (ε,δ)-LDP (user-side noise)",
}

// lqAgents describes the LQ agents.
var lqAgents = map[string]string{
	"ofu-rl":                     "OFU-RL with changing regularizers, non-private baseline (λI, exact statistics; ε = ∞)",
	"private-ofu-rl":             "Private-OFU-RL (Alg. 1): two binary-tree counters with Gaussian noise, (ε,δ)-JDP, private confidence radius (spec fix), pair scaling",
	"practical-ofu-rl":           "practical Private-OFU-RL: budgeted contributions, batched releases, continual counters, (ε,δ)-JDP under replace-one",
	"practical-ofu-rl-theory":    "practical-ofu-rl with the theory constants (budget H((1+γ)²+1), union bound over releases)",
	"practical-ofu-rl-noise-off": "practical-ofu-rl's non-private twin",
}
