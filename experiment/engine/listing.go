package engine

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dprl/dprl/experiment/calibration"
)

// The provenance labels of `dprl list`: every agent is either from the papers or one of dprl's
// own practical agents (private exactly as claimed, no regret proof).
const (
	LabelPaper     = "[paper]"
	LabelPractical = "[practical (dprl's own)]"
)

// AgentLabel returns the provenance label of an agent: dprl's practical agents are named
// practical-* (practical-vtr/jdp, …), every other agent is from the papers.
func AgentLabel(name string) string {
	if strings.HasPrefix(name, "practical") {
		return LabelPractical
	}
	return LabelPaper
}

// Listing is a family's part of `dprl list` in the layout every family shares (Write): its
// environments with their parameters, its agents labelled as the papers' or dprl's own, its
// privacy settings, and notes. Registry.List adds the family's reproductions.
type Listing struct {
	// Family is the family's name and Title its model class and papers.
	Family, Title string
	// Envs are the environments (Params: the env.params / --env-param names; "" for none).
	Envs []Entry
	// Agents are the agents the family runs, by the names its configurations take.
	Agents []Entry
	// Privacy are the privacy settings: calibrations, privatizers, neighbouring relations.
	Privacy []Entry
	// Notes are further lines (bonus presets, where the practical agents run, …).
	Notes []string
}

// Entry is one line of a Listing.
type Entry struct {
	Name, Params, Desc string
}

// Add appends the entries, environments, agents, privacy settings and notes of o (a suite's
// part of the family's listing).
func (l *Listing) Add(o Listing) {
	l.Envs = append(l.Envs, o.Envs...)
	l.Agents = append(l.Agents, o.Agents...)
	l.Privacy = append(l.Privacy, o.Privacy...)
	l.Notes = append(l.Notes, o.Notes...)
}

// Write writes the listing.
func (l Listing) Write(w io.Writer) {
	fmt.Fprintf(w, "== %s: %s ==\n", l.Family, l.Title)
	fmt.Fprintln(w, "Environments (env.name; parameters in env.params, or dprl run --env NAME --env-param NAME=VALUE):")
	for _, e := range l.Envs {
		d := e.Desc
		if e.Params != "" {
			d += " [params: " + e.Params + "]"
		}
		fmt.Fprintf(w, "  %-16s %s\n", e.Name, d)
	}
	fmt.Fprintln(w, "Agents (agents: in a configuration, dprl run --agent):")
	for _, a := range l.Agents {
		fmt.Fprintf(w, "  %-28s %-25s %s\n", a.Name, AgentLabel(a.Name), a.Desc)
	}
	fmt.Fprintln(w, "Privacy:")
	for _, p := range l.Privacy {
		fmt.Fprintf(w, "  %-10s %s\n", p.Name, p.Desc)
	}
	for _, n := range l.Notes {
		fmt.Fprintln(w, n)
	}
}

// List writes `dprl list`: every family's listing (Family.Catalogue) followed by its
// reproductions (`dprl reproduce NAME`, with their descriptions).
func (r *Registry) List(w io.Writer) {
	fmt.Fprintln(w, "Agents are labelled "+LabelPaper+" (an algorithm from the papers) or "+LabelPractical+
		" (dprl's own practical agent: private exactly as claimed, no regret proof).")
	for _, n := range r.Names() {
		f := r.families[n]
		fmt.Fprintln(w)
		f.Catalogue(w)
		rp, ok := f.(Reproducer)
		if !ok {
			continue
		}
		var names []string
		for name := range rp.Reproductions() {
			names = append(names, name)
		}
		sort.Strings(names)
		fmt.Fprintln(w, "Reproductions (dprl sweep config NAME prints the configuration):")
		for _, name := range names {
			d := ""
			if ds, ok := f.(Describer); ok {
				d = ds.Describe(name)
			}
			fmt.Fprintf(w, "  dprl reproduce %-30s %s\n", name, d)
		}
	}
	fmt.Fprintln(w, "\n== Calibration names (every family; package experiment/calibration) ==")
	for _, n := range calibration.Names() {
		fmt.Fprintf(w, "  %-10s %s\n", n, calibration.Describe(n))
	}
	fmt.Fprintln(w, "  (strict is the old name of exact and is still accepted)")
}
