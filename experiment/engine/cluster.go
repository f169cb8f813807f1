package engine

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/inputerr"
)

// Cluster describes a sweep to launch on a cluster: every shard task runs
// `dprl sweep run CONFIG --out DIR` (its shard taken from the array task's environment), and
// one merge task runs `dprl sweep merge CONFIG --out DIR` once all shards succeeded.
//
// Requirement: Out (and Config, and the dprl binary for Slurm) must be on a filesystem shared
// by every node (NFS, Lustre, a Kubernetes ReadWriteMany volume): shards write their unit
// files into Out/units and the merge reads them all.
//
// Every value that reaches a generated file is checked (Validate, ValidateSlurm,
// ValidateK8s): no value can add a line or a command to a script or a manifest.
type Cluster struct {
	// Name names the jobs (dprl-<Name>-run, dprl-<Name>-merge); it is reduced to lower-case
	// letters, digits and dashes.
	Name string
	// Dprl is the dprl binary (Slurm) or the command in the image (Kubernetes).
	Dprl string
	// Config is the sweep configuration (a path, or an embedded reproduction's name).
	Config string
	// ConfigData is the configuration file's content, nil when Config names an embedded
	// reproduction. Kubernetes ships it to the pods in a ConfigMap.
	ConfigData []byte
	// Out is the run directory. Slurm: an absolute path on the shared filesystem. Kubernetes:
	// a directory on the claim, relative to it or absolute under Mount (see PodOut).
	Out string
	// Shards is the number of array tasks n; Parallel at most k run at once (0 = no limit).
	Shards, Parallel int
	// Workers is the number of units each task runs at once (its CPUs).
	Workers int
	// Time is the Slurm time limit of one task (e.g. "02:00:00"; empty = the partition's).
	Time string
	// Partition is the Slurm partition (empty = the default).
	Partition string
	// Image, Claim and Mount are the Kubernetes container image, the PersistentVolumeClaim
	// holding Out, and where it is mounted.
	Image, Claim, Mount string
}

// ConfigMountPath is where the Kubernetes pods find the ConfigMap holding the configuration
// file (mounted read-only); --mount must not overlap it.
const ConfigMountPath = "/etc/dprl-config"

// MaxConfigMapBytes bounds a configuration shipped in a ConfigMap (the API server refuses
// objects over 1 MiB; the rest is left for the object's other fields).
const MaxConfigMapBytes = 1<<20 - 16<<10

// Lengths the patterns below leave to a separate check.
const (
	maxImage        = 512 // bytes of a container image reference
	maxConfigMapKey = 253 // bytes of a ConfigMap key
)

var (
	safeName = regexp.MustCompile(`[^a-z0-9-]+`)
	// slurmTime is Slurm's time formats: minutes, minutes:seconds, hours:minutes:seconds,
	// days-hours, days-hours:minutes, days-hours:minutes:seconds, and no limit.
	slurmTime = regexp.MustCompile(`^(?:[0-9]{1,9}(?::[0-9]{1,2}){0,2}|[0-9]{1,9}-[0-9]{1,2}(?::[0-9]{1,2}){0,2}|(?i:unlimited|infinite))$`)
	// slurmPartition is a conservative partition list: names of letters, digits, _ . -,
	// separated by commas (at most 256 bytes in all).
	slurmPartition = regexp.MustCompile(`^[A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*$`)
	// sbatchPath is what an #SBATCH --output= line carries so that sbatch reads it back
	// literally: sbatch splits its lines at whitespace, removes quotes and backslashes, ends
	// them at #, and expands % patterns in file names.
	sbatchPath = regexp.MustCompile(`^/[A-Za-z0-9/._+,=@:~-]*$`)
	// k8sImage is a container image reference: [registry[:port]/]path[:tag][@digest] (at most
	// maxImage bytes, checked apart: a bounded repetition {0,511} compiled to a program of 512
	// copies, a millisecond of every dprl process's start).
	k8sImage = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$`)
	// dns1123Subdomain is a Kubernetes object name such as a PersistentVolumeClaim's.
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$`)
	// k8sMount is a conservative absolute mount path.
	k8sMount = regexp.MustCompile(`^(?:/[A-Za-z0-9._-]+)+$`)
	// configMapKey is a ConfigMap key (and a file name in the pods), at most maxConfigMapKey
	// bytes (checked apart, as for k8sImage).
	configMapKey = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	// reproductionName is an embedded reproduction's name.
	reproductionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// checkText refuses a value that no generated file may carry: invalid UTF-8, control
// characters (newlines, carriage returns, NUL, escapes), format characters (bidirectional
// overrides, zero-width characters) and the Unicode line and paragraph separators.
func checkText(flag, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: not valid UTF-8: %q", flag, s)
	}
	for _, r := range s {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("%s: control character %U not allowed (it could add a line to the generated files), got %q", flag, r, s)
		}
	}
	return nil
}

// sbatchSplits reports whether sbatch may mangle s in an #SBATCH line: it blanks the word
// "packjob" wherever it occurs on the line, and "hetjob" is the heterogeneous-job separator
// that replaced it.
func sbatchSplits(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "packjob") || strings.Contains(l, "hetjob")
}

// Validate checks the fields common to Slurm and Kubernetes; errors name the flag.
func (c Cluster) Validate() error {
	switch {
	case c.Shards < 1 || c.Shards > 100000:
		return fmt.Errorf("--shards: must be in [1, 100000], got %d", c.Shards)
	case c.Parallel < 0:
		return fmt.Errorf("--parallel: must be >= 0 (0 = no limit), got %d", c.Parallel)
	case c.Workers < 1 || c.Workers > 1024:
		return fmt.Errorf("--workers: must be in [1, 1024] for a cluster task, got %d", c.Workers)
	case c.Out == "":
		return fmt.Errorf("--out: required")
	}
	for _, f := range []struct{ flag, v string }{
		{"--dprl", c.Dprl}, {"config", c.Config}, {"--out", c.Out}, {"--time", c.Time},
		{"--partition", c.Partition}, {"--image", c.Image}, {"--claim", c.Claim}, {"--mount", c.Mount},
	} {
		if err := checkText(f.flag, f.v); err != nil {
			return err
		}
	}
	if strings.HasPrefix(c.Dprl, "-") {
		return fmt.Errorf("--dprl: must not start with - (it would be read as an option), got %q", c.Dprl)
	}
	if strings.HasPrefix(c.Config, "-") {
		return fmt.Errorf("config: must not start with - (it would be read as an option), got %q", c.Config)
	}
	if c.Time != "" && !slurmTime.MatchString(c.Time) {
		return fmt.Errorf("--time: want a Slurm time limit (minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, days-hours:minutes:seconds or UNLIMITED), got %q", c.Time)
	}
	if c.Partition != "" && (len(c.Partition) > 256 || !slurmPartition.MatchString(c.Partition) || sbatchSplits(c.Partition)) {
		return fmt.Errorf("--partition: want partition names of letters, digits, _ . - separated by commas, got %q", c.Partition)
	}
	return nil
}

// validateWith checks the fields every launcher uses (Validate) and that Dprl, the dprl
// command the tasks run (dprl: what it is for the launcher, for the error), is set.
func (c Cluster) validateWith(dprl string) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Dprl == "" {
		return fmt.Errorf("--dprl: required (%s)", dprl)
	}
	return nil
}

// ValidateSlurm checks the fields for SlurmScripts: Validate, and Out must be an absolute
// path that an #SBATCH --output line carries literally.
func (c Cluster) ValidateSlurm() error {
	if err := c.validateWith("the dprl binary on the nodes"); err != nil {
		return err
	}
	switch {
	case c.Config == "":
		return fmt.Errorf("config: required")
	case !strings.HasPrefix(c.Out, "/"):
		return fmt.Errorf("--out: must be an absolute path (the tasks run on other nodes), got %q", c.Out)
	case !sbatchPath.MatchString(c.Out) || sbatchSplits(c.Out):
		return fmt.Errorf("--out: %q cannot be written in the scripts' #SBATCH --output lines, which sbatch reads back literally only for paths of ASCII letters, digits and / . _ - + , = @ : ~ (no spaces, quotes, backslashes, #, %%, non-ASCII, nor the words hetjob or packjob): choose another run directory", c.Out)
	}
	return nil
}

// jobName is a name usable by Slurm and Kubernetes (lower-case letters, digits, dashes; a
// DNS-1123 label of at most 63 characters that sbatch reads back literally).
func (c Cluster) jobName(suffix string) string {
	n := safeName.ReplaceAllString(strings.ToLower(c.Name), "-")
	n = strings.ReplaceAll(strings.ReplaceAll(n, "hetjob", "het-job"), "packjob", "pack-job")
	n = strings.Trim(n, "-")
	if len(n) > 40 {
		n = strings.TrimRight(n[:40], "-")
	}
	if n == "" {
		n = "sweep"
	}
	return "dprl-" + n + "-" + suffix
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// SlurmFiles returns the files of a Slurm submission after ValidateSlurm: run.sbatch (the
// job array --array=0-(n-1)%k; each task takes its shard from
// SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT), merge.sbatch, and submit.sh, which submits the
// array and then the merge with --dependency=afterok on the array, and prints both job IDs.
//
// Every value in a shell command is single-quoted; the #SBATCH lines hold only values that
// ValidateSlurm restricts to what sbatch reads back literally.
func (c Cluster) SlurmFiles() (map[string]string, error) {
	if err := c.ValidateSlurm(); err != nil {
		return nil, err
	}
	array := fmt.Sprintf("0-%d", c.Shards-1)
	if c.Parallel > 0 {
		array += fmt.Sprintf("%%%d", c.Parallel)
	}
	header := func(name, output string, cpus int) string {
		var b strings.Builder
		b.WriteString("#!/bin/bash\n# Generated by dprl sweep slurm. The run directory must be on a filesystem shared by every node.\n")
		fmt.Fprintf(&b, "#SBATCH --job-name=%s\n#SBATCH --output=%s\n#SBATCH --cpus-per-task=%d\n#SBATCH --ntasks=1\n", name, output, cpus)
		if c.Time != "" {
			fmt.Fprintf(&b, "#SBATCH --time=%s\n", c.Time)
		}
		if c.Partition != "" {
			fmt.Fprintf(&b, "#SBATCH --partition=%s\n", c.Partition)
		}
		return b.String()
	}
	run := header(c.jobName("run"), c.Out+"/slurm/run-%A_%a.out", c.Workers) +
		fmt.Sprintf("#SBATCH --array=%s\nset -euo pipefail\n# The shard i/n comes from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT; a rerun skips completed units.\nexec %s sweep run %s --out %s --workers %d --quiet\n",
			array, shq(c.Dprl), shq(c.Config), shq(c.Out), c.Workers)
	merge := header(c.jobName("merge"), c.Out+"/slurm/merge-%j.out", 1) +
		fmt.Sprintf("set -euo pipefail\nexec %s sweep merge %s --out %s\n", shq(c.Dprl), shq(c.Config), shq(c.Out))
	submit := fmt.Sprintf(`#!/bin/bash
# Generated by dprl sweep slurm: submits the shard array, then the merge once every shard succeeded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p -- %s
run=$(sbatch --parsable "$here/run.sbatch")
run=${run%%%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$run" "$here/merge.sbatch")
merge=${merge%%%%;*}
# One job ID per line: the array (%d shards), then the merge.
echo "$run"
echo "$merge"
`, shq(c.Out+"/slurm"), c.Shards)
	return map[string]string{"run.sbatch": run, "merge.sbatch": merge, "submit.sh": submit}, nil
}

// SlurmScripts is SlurmFiles for valid fields; it panics if ValidateSlurm fails (validate
// first, or use SlurmFiles).
func (c Cluster) SlurmScripts() map[string]string {
	files, err := c.SlurmFiles()
	if err != nil {
		panic("engine: SlurmScripts: " + err.Error())
	}
	return files
}

// under reports whether the clean absolute path p lies in dir (or is dir).
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// PodOut returns the run directory as the pods see it: MOUNT/OUT for a relative Out (a
// directory on the claim), Out itself when it is absolute and under Mount. Out may not leave
// the volume (no .. components) nor be the volume's root.
func (c Cluster) PodOut() (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("--out: %s; give the run directory on the claim, relative to it (e.g. sweeps/s1, which the pods see as %s/sweeps/s1) or as an absolute path under --mount %s, got %q",
			why, c.Mount, c.Mount, c.Out)
	}
	if c.Out == "" {
		return bad("required")
	}
	for _, e := range strings.Split(c.Out, "/") {
		if e == ".." {
			return bad("must not contain ..")
		}
	}
	o := path.Clean(c.Out)
	if !path.IsAbs(o) {
		o = path.Join(c.Mount, o)
	}
	if !path.IsAbs(c.Mount) || o == path.Clean(c.Mount) || !under(o, path.Clean(c.Mount)) {
		return bad("must be a directory on the volume, not the volume's root nor outside it")
	}
	return o, nil
}

// configKey is the ConfigMap key (and file name in the pods) of the configuration: its base
// name when that is a valid key, else config.yaml.
func (c Cluster) configKey() string {
	b := path.Base(strings.ReplaceAll(c.Config, `\`, "/"))
	if len(b) <= maxConfigMapKey && configMapKey.MatchString(b) && !strings.HasPrefix(b, "..") && b != "." {
		return b
	}
	return "config.yaml"
}

// PodConfig returns the configuration as the pods are given it: the file in the ConfigMap
// mounted at ConfigMountPath, or the embedded reproduction's name.
func (c Cluster) PodConfig() string {
	if c.ConfigData == nil {
		return c.Config
	}
	return ConfigMountPath + "/" + c.configKey()
}

// ValidateK8s checks the fields for K8sFiles: Validate, and the image, the claim, the mount,
// the run directory on the claim (PodOut) and the configuration (a file that fits in a
// ConfigMap, or an embedded reproduction's name).
func (c Cluster) ValidateK8s() error {
	if err := c.validateWith("the dprl command in the image"); err != nil {
		return err
	}
	switch {
	case len(c.Image) > maxImage || !k8sImage.MatchString(c.Image):
		return fmt.Errorf("--image: want a container image reference ([registry[:port]/]name[:tag][@digest]: letters, digits, . _ / : @ + -), got %q", c.Image)
	case len(c.Claim) > 253 || !dns1123Subdomain.MatchString(c.Claim):
		return fmt.Errorf("--claim: want a PersistentVolumeClaim name (lower-case letters, digits, - and ., at most 253), got %q", c.Claim)
	case !k8sMount.MatchString(c.Mount) || path.Clean(c.Mount) != c.Mount || strings.Contains("/"+c.Mount+"/", "/../") || strings.Contains("/"+c.Mount+"/", "/./"):
		return fmt.Errorf("--mount: want an absolute path of letters, digits, . _ - (not /, no . or .. components), got %q", c.Mount)
	case under(c.Mount, ConfigMountPath) || under(ConfigMountPath, c.Mount):
		return fmt.Errorf("--mount: %q overlaps %s, where the pods find the configuration", c.Mount, ConfigMountPath)
	}
	if _, err := c.PodOut(); err != nil {
		return err
	}
	if c.ConfigData == nil {
		if !reproductionName.MatchString(c.Config) {
			return fmt.Errorf("config: %q is neither a configuration file nor an embedded reproduction's name", c.Config)
		}
		return nil
	}
	if len(c.ConfigData) > MaxConfigMapBytes {
		return fmt.Errorf("config: %s is %d bytes, more than a ConfigMap holds (%d)", c.Config, len(c.ConfigData), MaxConfigMapBytes)
	}
	if !utf8.Valid(c.ConfigData) {
		return fmt.Errorf("config: %s is not UTF-8 text", c.Config)
	}
	return nil
}

// The Kubernetes objects written by K8sManifests: the fields dprl sets, with the API's names.
type (
	k8sMeta struct {
		Name string `yaml:"name"`
	}
	k8sConfigMap struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   k8sMeta           `yaml:"metadata"`
		Data       map[string]string `yaml:"data"`
	}
	k8sJob struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   k8sMeta    `yaml:"metadata"`
		Spec       k8sJobSpec `yaml:"spec"`
	}
	k8sJobSpec struct {
		CompletionMode       string         `yaml:"completionMode,omitempty"`
		Completions          int            `yaml:"completions,omitempty"`
		Parallelism          int            `yaml:"parallelism,omitempty"`
		BackoffLimit         *int           `yaml:"backoffLimit,omitempty"`
		BackoffLimitPerIndex *int           `yaml:"backoffLimitPerIndex,omitempty"`
		Template             k8sPodTemplate `yaml:"template"`
	}
	k8sPodTemplate struct {
		Spec k8sPodSpec `yaml:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy string         `yaml:"restartPolicy"`
		Containers    []k8sContainer `yaml:"containers"`
		Volumes       []k8sVolume    `yaml:"volumes"`
	}
	k8sContainer struct {
		Name         string         `yaml:"name"`
		Image        quoted         `yaml:"image"`
		Command      []quoted       `yaml:"command"`
		Env          []k8sEnv       `yaml:"env,omitempty"`
		Resources    *k8sResources  `yaml:"resources,omitempty"`
		VolumeMounts []k8sMountSpec `yaml:"volumeMounts"`
	}
	k8sEnv struct {
		Name  string `yaml:"name"`
		Value quoted `yaml:"value"`
	}
	k8sResources struct {
		Requests map[string]quoted `yaml:"requests"`
	}
	k8sMountSpec struct {
		Name      string `yaml:"name"`
		MountPath quoted `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly,omitempty"`
	}
	k8sVolume struct {
		Name                  string        `yaml:"name"`
		PersistentVolumeClaim *k8sClaimRef  `yaml:"persistentVolumeClaim,omitempty"`
		ConfigMap             *k8sConfigRef `yaml:"configMap,omitempty"`
	}
	k8sClaimRef struct {
		ClaimName quoted `yaml:"claimName"`
	}
	k8sConfigRef struct {
		Name string `yaml:"name"`
	}
)

// quoted is a string written as a double-quoted YAML scalar (escaped by the YAML encoder).
type quoted string

// MarshalYAML implements yaml.Marshaler.
func (q quoted) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(q), Style: yaml.DoubleQuotedStyle}, nil
}

// yamlDocs encodes the objects as one YAML stream (documents separated by ---) after a
// comment.
func yamlDocs(comment string, objs ...any) string {
	var b bytes.Buffer
	b.WriteString(comment)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, o := range objs {
		if err := enc.Encode(o); err != nil {
			panic("engine: encoding a Kubernetes manifest: " + err.Error())
		}
	}
	if err := enc.Close(); err != nil {
		panic("engine: encoding a Kubernetes manifest: " + err.Error())
	}
	return b.String()
}

// K8sFiles returns the manifests of K8sManifests after ValidateK8s.
func (c Cluster) K8sFiles() (map[string]string, error) {
	if err := c.ValidateK8s(); err != nil {
		return nil, err
	}
	return c.K8sManifests(), nil
}

// K8sManifests returns a Kubernetes Indexed Job running the shards (completions n, parallelism
// k; each pod takes its shard from JOB_COMPLETION_INDEX and DPRL_SHARDS) and the merge Job, to
// be applied once the first has completed (`kubectl wait --for=condition=complete`). Both mount
// the ReadWriteMany claim Claim at Mount and run in PodOut; a configuration file is shipped
// in a ConfigMap (the first document of run-job.yaml) mounted read-only at ConfigMountPath.
// Every value is a YAML-encoded string: none can add a field. Call ValidateK8s first (or use
// K8sFiles): it checks that the pods can use the values.
func (c Cluster) K8sManifests() map[string]string {
	par := c.Parallel
	if par == 0 {
		par = c.Shards
	}
	out, err := c.PodOut()
	if err != nil {
		out = c.Out
	}
	cfg := c.PodConfig()
	mounts := []k8sMountSpec{{Name: "runs", MountPath: quoted(c.Mount)}}
	vols := []k8sVolume{{Name: "runs", PersistentVolumeClaim: &k8sClaimRef{ClaimName: quoted(c.Claim)}}}
	var cm *k8sConfigMap
	if c.ConfigData != nil {
		cm = &k8sConfigMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: k8sMeta{Name: c.jobName("config")},
			Data: map[string]string{c.configKey(): string(c.ConfigData)}}
		mounts = append(mounts, k8sMountSpec{Name: "config", MountPath: ConfigMountPath, ReadOnly: true})
		vols = append(vols, k8sVolume{Name: "config", ConfigMap: &k8sConfigRef{Name: cm.Metadata.Name}})
	}
	command := func(verb string) []quoted {
		argv := []quoted{quoted(c.Dprl), "sweep", quoted(verb), quoted(cfg), "--out", quoted(out)}
		if verb == "run" {
			argv = append(argv, "--workers", quoted(fmt.Sprint(c.Workers)), "--quiet")
		}
		return argv
	}
	perIndex, once := 3, 1
	run := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: c.jobName("run")}, Spec: k8sJobSpec{
		CompletionMode: "Indexed", Completions: c.Shards, Parallelism: par, BackoffLimitPerIndex: &perIndex,
		Template: k8sPodTemplate{Spec: k8sPodSpec{RestartPolicy: "Never", Volumes: vols, Containers: []k8sContainer{{
			Name: "shard", Image: quoted(c.Image), Command: command("run"),
			Env:          []k8sEnv{{Name: "DPRL_SHARDS", Value: quoted(fmt.Sprint(c.Shards))}},
			Resources:    &k8sResources{Requests: map[string]quoted{"cpu": quoted(fmt.Sprint(c.Workers))}},
			VolumeMounts: mounts,
		}}}},
	}}
	merge := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: c.jobName("merge")}, Spec: k8sJobSpec{
		BackoffLimit: &once,
		Template: k8sPodTemplate{Spec: k8sPodSpec{RestartPolicy: "Never", Volumes: vols, Containers: []k8sContainer{{
			Name: "merge", Image: quoted(c.Image), Command: command("merge"), VolumeMounts: mounts,
		}}}},
	}}
	runName := c.jobName("run")
	runObjs := []any{run}
	what := "the shards of the sweep as an Indexed Job"
	if cm != nil {
		runObjs = []any{cm, run}
		what = "the configuration (ConfigMap " + cm.Metadata.Name + ") and the shards of the sweep as an Indexed Job"
	}
	runComment := fmt.Sprintf(`# Generated by dprl sweep k8s: %s.
# The run directory is on the ReadWriteMany claim mounted in every pod (shared by every pod).
#   kubectl apply -f run-job.yaml
`, what)
	mergeComment := fmt.Sprintf(`# Generated by dprl sweep k8s: apply once %s has completed:
#   kubectl wait --for=condition=complete --timeout=-1s job/%s && kubectl apply -f merge-job.yaml
`, runName, runName)
	return map[string]string{"run-job.yaml": yamlDocs(runComment, runObjs...), "merge-job.yaml": yamlDocs(mergeComment, merge)}
}

// LoadSweep plans a sweep configuration (Load: a file with `family:`, def when it has none,
// or an embedded reproduction's name); its errors are bad input.
func (r *Registry) LoadSweep(arg, def string) (*Planned, Source, error) {
	p, src, err := r.Load(arg, def)
	return p, src, inputerr.Wrap(err)
}

// prepareCluster validates the fields common to Slurm and Kubernetes (Validate), plans the
// sweep config (LoadSweep; its name names the jobs) and resolves the configuration: a file
// (its absolute path and its content, which Kubernetes ships in a ConfigMap, checked to be the
// bytes planned) or an embedded reproduction's name.
func (r *Registry) prepareCluster(c *Cluster, config, def string) error {
	if err := c.Validate(); err != nil {
		return inputerr.Wrap(err)
	}
	p, src, err := r.LoadSweep(config, def)
	if err != nil {
		return err
	}
	c.Name = p.Name()
	if name, ok := strings.CutPrefix(src.Name, "embedded:"); ok {
		c.Config, c.ConfigData = name, nil
		return nil
	}
	data, err := boundedread.ReadFile(config, boundedread.DefaultLimit)
	if err != nil {
		return inputerr.New("config: %w", err)
	}
	for _, in := range src.Inputs {
		if in.Role == "config" && in.SHA256 != rundir.HashBytes("config", config, data).SHA256 {
			return inputerr.New("config: %s changed while it was read", config)
		}
	}
	if c.Config, err = filepath.Abs(config); err != nil {
		return err
	}
	c.ConfigData = data
	return nil
}

// WriteSlurm writes the Slurm submission of the sweep config (`dprl sweep slurm`; SlurmFiles)
// into dir (default OUT/slurm) after resolving the configuration (a file or an embedded
// reproduction's name; def is the family of a file without `family:`), Out (made absolute)
// and the dprl binary (default: this one). It returns the paths written, in name order, and
// the path of submit.sh. Errors in the flags are bad input naming them.
func (r *Registry) WriteSlurm(c *Cluster, config, def, dir string) (paths []string, submit string, err error) {
	if err := r.prepareCluster(c, config, def); err != nil {
		return nil, "", err
	}
	if c.Out, err = filepath.Abs(c.Out); err != nil {
		return nil, "", err
	}
	if c.Dprl == "" {
		if c.Dprl, err = os.Executable(); err != nil {
			return nil, "", err
		}
	}
	files, err := c.SlurmFiles()
	if err != nil {
		return nil, "", inputerr.Wrap(err)
	}
	if dir == "" {
		dir = filepath.Join(c.Out, "slurm")
	}
	paths, err = writeFiles(dir, files)
	return paths, filepath.Join(dir, "submit.sh"), err
}

// WriteK8s writes the Kubernetes manifests of the sweep config (`dprl sweep k8s`; K8sFiles)
// into dir (default ./k8s) after checking that the image and the claim are given and resolving
// the configuration (def is the family of a file without `family:`). It returns the paths
// written, in name order, and the paths of the run and the merge Jobs.
func (r *Registry) WriteK8s(c *Cluster, config, def, dir string) (paths []string, run, merge string, err error) {
	if c.Image == "" {
		return nil, "", "", inputerr.New("--image: required (the container image holding dprl)")
	}
	if c.Claim == "" {
		return nil, "", "", inputerr.New("--claim: required (a ReadWriteMany PersistentVolumeClaim holding the run directory)")
	}
	if err := r.prepareCluster(c, config, def); err != nil {
		return nil, "", "", err
	}
	files, err := c.K8sFiles()
	if err != nil {
		return nil, "", "", inputerr.Wrap(err)
	}
	if dir == "" {
		dir = "k8s"
	}
	paths, err = writeFiles(dir, files)
	return paths, filepath.Join(dir, "run-job.yaml"), filepath.Join(dir, "merge-job.yaml"), err
}

// writeFiles writes the files of a cluster submission into dir, atomically, in name order
// (scripts *.sh executable), and returns their paths. A directory that cannot be created is
// bad input naming --dir.
func writeFiles(dir string, files map[string]string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, inputerr.New("--dir: %v", err)
	}
	var names, paths []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mode := os.FileMode(0o644)
		if filepath.Ext(n) == ".sh" {
			mode = 0o755
		}
		if err := atomicfile.WriteBytes(filepath.Join(dir, n), []byte(files[n]), mode); err != nil {
			return paths, err
		}
		paths = append(paths, filepath.Join(dir, n))
	}
	return paths, nil
}

// ShellWord returns s as one word for a POSIX shell (quoted only when it needs to be).
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,=@:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
