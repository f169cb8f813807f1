package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	tabexp "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/internal/inputerr"
)

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweeps that outgrow one machine: plan, run shards, merge; Slurm and Kubernetes launchers",
		Long: "A sweep is a configuration (a YAML file with family: …, or an embedded reproduction's name) planned into\n" +
			"units (cell, seed), each with a stable ID. `sweep run --shard i/n` runs every n-th unit into OUT/units (one file\n" +
			"per unit, written atomically; completed units are skipped, so a killed task is simply rerun); `sweep merge`\n" +
			"checks that every unit is there and writes the outputs, byte-identical to a one-machine `dprl run`.\n" +
			"OUT must be on a filesystem shared by every task (NFS, Lustre, a ReadWriteMany volume).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return inputerr.New("sweep: name a subcommand (plan, run, merge, slurm, k8s, config)")
		},
	}
	cmd.AddCommand(newSweepPlanCmd(stdout), newSweepRunCmd(stdout, stderr), newSweepMergeCmd(stdout),
		newSweepSlurmCmd(stdout), newSweepK8sCmd(stdout), newSweepConfigCmd(stdout))
	return cmd
}

func newSweepPlanCmd(stdout io.Writer) *cobra.Command {
	var shards int
	cmd := &cobra.Command{
		Use:   "plan CONFIG",
		Short: "List the units of a sweep (index, shard, ID, seed, cell)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if shards < 1 || shards > engine.MaxShards {
				return inputerr.New("--shards: must be in [1, %d], got %d", engine.MaxShards, shards)
			}
			p, _, err := newRegistry().LoadSweep(args[0], tabexp.FamilyName)
			if err == nil {
				engine.WriteUnits(stdout, p, shards)
			}
			return err
		},
	}
	cmd.Flags().IntVar(&shards, "shards", 1, "show the shard of each unit for this many shards")
	return cmd
}

func newSweepRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, shard string
	var workers int
	var quiet bool
	cmd := &cobra.Command{
		Use:   "run CONFIG --out DIR [--shard i/n]",
		Short: "Run one shard's units into DIR/units (i/n from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX/DPRL_SHARDS)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := engine.ParseShard(shard, nil)
			if err != nil {
				return inputerr.Error{Err: err}
			}
			if err := engine.CheckWorkers(workers); err != nil {
				return err
			}
			p, _, err := loadSweepInto(args[0], out, "the sweep's directory, shared by every shard")
			if err != nil {
				return err
			}
			start := time.Now()
			ran, skipped, err := localRun(workers, out, true, outputFlags{}, stderr, quiet).RunShard(p, s)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "shard %d/%d of %s: ran %d units, %d already complete, in %.1f s\n", s.I, s.N, p.Name(), ran, skipped, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "the sweep's run directory (shared filesystem)")
	f.StringVar(&shard, "shard", "", "i/n: run every n-th unit starting at i (default: from the array task's environment)")
	f.IntVar(&workers, "workers", 0, "units run at once (0 = all cores)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	return cmd
}

func newSweepMergeCmd(stdout io.Writer) *cobra.Command {
	var out string
	var partial, force bool
	cmd := &cobra.Command{
		Use:   "merge CONFIG --out DIR",
		Short: "Check that every unit is complete and write the sweep's outputs (refuses a partial sweep unless --allow-partial)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, src, err := loadSweepInto(args[0], out, "the sweep's directory")
			if err != nil {
				return err
			}
			start := time.Now()
			text, err := engine.LocalRun{Out: out, Force: force, Command: os.Args, Inputs: src.Inputs}.Merge(p, partial)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "the sweep's run directory")
	f.BoolVar(&partial, "allow-partial", false, "merge even if units are missing (the outputs then use the seeds present)")
	f.BoolVar(&force, "force", false, "merge again over an earlier merge's outputs")
	return cmd
}

// loadSweepInto loads the sweep configuration config to run or merge into out, which must be
// set (outIs says what it is).
func loadSweepInto(config, out, outIs string) (*engine.Planned, engine.Source, error) {
	if out == "" {
		return nil, engine.Source{}, inputerr.New("--out: required (%s)", outIs)
	}
	return newRegistry().LoadSweep(config, tabexp.FamilyName)
}

// clusterFlags are the flags shared by `sweep slurm` and `sweep k8s`.
func clusterFlags(cmd *cobra.Command, c *engine.Cluster, dir *string, outHelp, dirHelp string) {
	f := cmd.Flags()
	f.StringVar(&c.Out, "out", "", outHelp)
	f.IntVar(&c.Shards, "shards", 0, "number of array tasks n")
	f.IntVar(&c.Parallel, "parallel", 0, "at most k tasks at once (0 = no limit)")
	f.IntVar(&c.Workers, "workers", 1, "units run at once by each task (its CPUs)")
	f.StringVar(dir, "dir", "", dirHelp)
}

// printPaths prints the files a cluster command wrote.
func printPaths(stdout io.Writer, paths []string) {
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
}

// clusterCmd describes `sweep slurm` or `sweep k8s`: its help and write, which writes the
// launcher's files for the sweep config into dir and returns their paths and what to print
// once they are all written (how to submit them).
type clusterCmd struct {
	use, short, long, outHelp, dirHelp string
	write                              func(r *engine.Registry, c *engine.Cluster, config, dir string) (paths []string, next string, err error)
}

// command returns the cobra command, with the flags shared by the launchers (clusterFlags) set
// into c; the caller adds the launcher's own.
func (k clusterCmd) command(stdout io.Writer, c *engine.Cluster) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   k.use,
		Short: k.short,
		Long:  k.long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, next, err := k.write(newRegistry(), c, args[0], dir)
			printPaths(stdout, paths)
			if err != nil {
				return err
			}
			fmt.Fprint(stdout, next)
			return nil
		},
	}
	clusterFlags(cmd, c, &dir, k.outHelp, k.dirHelp)
	return cmd
}

func newSweepSlurmCmd(stdout io.Writer) *cobra.Command {
	var c engine.Cluster
	cmd := clusterCmd{
		use:     "slurm CONFIG --out DIR --shards n [--parallel k]",
		short:   "Write a Slurm job array (sbatch --array=0-(n-1)%k) and its merge job (--dependency=afterok), and submit.sh",
		outHelp: "the sweep's run directory, on a filesystem every node mounts at the same path (ASCII letters, digits and / . _ - + , = @ : ~ only: it is written in #SBATCH --output lines)",
		dirHelp: "where to write the files (default OUT/slurm)",
		write: func(r *engine.Registry, c *engine.Cluster, config, dir string) ([]string, string, error) {
			paths, submit, err := r.WriteSlurm(c, config, tabexp.FamilyName, dir)
			return paths, fmt.Sprintf("submit with: bash %s\n", engine.ShellWord(submit)), err
		},
	}.command(stdout, &c)
	f := cmd.Flags()
	f.StringVar(&c.Dprl, "dprl", "", "the dprl binary on the nodes (default: this binary; must be on the shared filesystem)")
	f.StringVar(&c.Time, "time", "", "time limit of one task in a Slurm format: minutes, [hours:]minutes:seconds, days-hours[:minutes[:seconds]] (default: the partition's)")
	f.StringVar(&c.Partition, "partition", "", "Slurm partition, or a comma-separated list (default: the cluster's default)")
	return cmd
}

func newSweepK8sCmd(stdout io.Writer) *cobra.Command {
	var c engine.Cluster
	cmd := clusterCmd{
		use:   "k8s CONFIG --out DIR --shards n --image IMAGE --claim PVC",
		short: "Write a Kubernetes Indexed Job for the shards (with a ConfigMap holding the configuration) and the merge Job",
		long: "Writes run-job.yaml (a ConfigMap holding the configuration file, mounted read-only in the pods at " + engine.ConfigMountPath + ",\n" +
			"and the shards as an Indexed Job) and merge-job.yaml. Both Jobs mount the ReadWriteMany claim --claim at --mount.\n" +
			"--out is the run directory on the claim: relative to it (--out sweeps/s1 is MOUNT/sweeps/s1 in the pods) or an\n" +
			"absolute path under --mount. An embedded reproduction is passed by name and needs no ConfigMap.",
		outHelp: "the sweep's run directory on the claim: relative to it (the pods see MOUNT/OUT) or an absolute path under --mount",
		dirHelp: "where to write the manifests (default ./k8s)",
		write: func(r *engine.Registry, c *engine.Cluster, config, dir string) ([]string, string, error) {
			paths, run, merge, err := r.WriteK8s(c, config, tabexp.FamilyName, dir)
			if err != nil {
				return paths, "", err
			}
			out, _ := c.PodOut()
			rel := strings.TrimPrefix(strings.TrimPrefix(out, c.Mount), "/")
			return paths, fmt.Sprintf("the pods write the sweep into %q (%q on the claim %s)\n", out, rel, c.Claim) +
				fmt.Sprintf("apply with: kubectl apply -f %s, then once it has completed: kubectl apply -f %s\n",
					engine.ShellWord(run), engine.ShellWord(merge)), nil
		},
	}.command(stdout, &c)
	f := cmd.Flags()
	f.StringVar(&c.Dprl, "dprl", "dprl", "the dprl command inside the image")
	f.StringVar(&c.Image, "image", "", "container image holding dprl")
	f.StringVar(&c.Claim, "claim", "", "ReadWriteMany PersistentVolumeClaim holding the run directory")
	f.StringVar(&c.Mount, "mount", "/runs", "where the claim is mounted in the pods")
	return cmd
}

func newSweepConfigCmd(stdout io.Writer) *cobra.Command {
	var episodes int
	var seeds string
	cmd := &cobra.Command{
		Use:   "config REPRODUCTION [--episodes K] [--seeds S]",
		Short: "Print an embedded reproduction's sweep configuration (family: …), optionally resized, to edit or to sweep",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := newRegistry()
			e, err := r.Reproduction(args[0])
			if err != nil {
				return err
			}
			var sd []uint64
			if cmd.Flags().Changed("seeds") {
				if sd, err = engine.SeedsFlag(seeds); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("episodes") && episodes < 1 {
				return inputerr.New("--episodes: must be >= 1, got %d", episodes)
			}
			out, err := engine.Resize(r, e, episodes, sd)
			if err != nil {
				return inputerr.Error{Err: err}
			}
			_, err = stdout.Write(out)
			return err
		},
	}
	cmd.Flags().IntVar(&episodes, "episodes", 0, "override K")
	cmd.Flags().StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-2")
	return cmd
}
