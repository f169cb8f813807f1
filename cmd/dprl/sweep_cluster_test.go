package main

// Tests of the cluster launchers (issue 18): `dprl sweep slurm` writes scripts that no value
// can inject a command into, and `dprl sweep k8s` writes manifests that the Kubernetes API
// types decode strictly and whose pods find the configuration and the run directory on their
// volumes.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/dprl/dprl/internal/testfiles"
)

// hostile is a file name component that a shell would expand, split or execute if it were
// not quoted: command substitutions, a semicolon, quotes, a backslash, glob and history
// characters, a comment, Slurm's % patterns and a non-ASCII letter. Running anything it
// contains creates a file named PWNED… in the working directory.
const hostile = "a $(touch PWNED1) `touch PWNED2` ;touch PWNED3; 'q' \"d\" \\x %A %j * ! # {a,b} ~ $HOME é"

// title is a hostile configuration name (at most 100 bytes); the job names derive from it.
const title = "x $(touch PWNED7) `touch PWNED8`;'q' \"d\" #%A HetJob packjob"

// sweepConfigFile writes a small sweep configuration (qiao-fig1 at 20 episodes, seed 1) named
// name in dir; a non-empty title replaces its `name:`.
func sweepConfigFile(t *testing.T, dir, name, title string) (string, []byte) {
	t.Helper()
	code, cfg, stderr := runCLI(t, "sweep", "config", "qiao-fig1", "--episodes", "20", "--seeds", "1")
	if code != 0 {
		t.Fatalf("sweep config: exit %d: %s", code, stderr)
	}
	if title != "" {
		b, err := json.Marshal(title)
		if err != nil {
			t.Fatal(err)
		}
		cfg = strings.Replace(cfg, "name: qiao-fig1\n", "name: "+string(b)+"\n", 1)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := putFile(t, dir, name, cfg)
	return p, []byte(cfg)
}

// noPwned fails if any file under root is named like an injected command's trace.
func noPwned(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), "PWNED") && !strings.Contains(d.Name(), "touch PWNED") {
			t.Errorf("an injected command ran: %s exists", p)
		}
		if strings.Contains(d.Name(), "INJECTED") && !strings.Contains(d.Name(), "echo INJECTED") {
			t.Errorf("an injected command ran: %s exists", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSweepSlurmRefusesUnsafeValues: every value that reaches a generated Slurm script and
// could break it out of its line or its quotes, or that sbatch's #SBATCH parser would not read
// back literally, is refused with exit status 2 naming the flag, and nothing is written.
func TestSweepSlurmRefusesUnsafeValues(t *testing.T) {
	root := t.TempDir()
	cfg, _ := sweepConfigFile(t, root, "s.yaml", "")
	nlCfg, _ := sweepConfigFile(t, root, "s\necho INJECTED.yaml", "")
	out := filepath.Join(root, "out")
	cases := []struct {
		flag  string
		extra []string
		want  string
	}{
		{"--out", []string{"--out", "/x\necho INJECTED"}, "--out"},
		{"--out", []string{"--out", "/x\r\necho INJECTED"}, "--out"},
		{"--out", []string{"--out", "/x/a b"}, "--out"},
		{"--out", []string{"--out", "/x/\"q\""}, "--out"},
		{"--out", []string{"--out", "/x/'q'"}, "--out"},
		{"--out", []string{"--out", "/x/$(touch PWNED)"}, "--out"},
		{"--out", []string{"--out", "/x/`touch PWNED`"}, "--out"},
		{"--out", []string{"--out", "/x/a;touch PWNED"}, "--out"},
		{"--out", []string{"--out", "/x/%A"}, "--out"},
		{"--out", []string{"--out", "/x/a\\b"}, "--out"},
		{"--out", []string{"--out", "/x/a#b"}, "--out"},
		{"--out", []string{"--out", "/x/HetJob"}, "--out"},
		{"--out", []string{"--out", "/x/packjob"}, "--out"},
		{"--time", []string{"--time", "02:00:00\n#SBATCH --wrap=touch PWNED"}, "--time"},
		{"--time", []string{"--time", "02:00:00 --wrap=id"}, "--time"},
		{"--time", []string{"--time", "$(touch PWNED)"}, "--time"},
		{"--time", []string{"--time", "2h"}, "--time"},
		{"--time", []string{"--time", "1-"}, "--time"},
		{"--time", []string{"--time", ":30"}, "--time"},
		{"--time", []string{"--time", "1:2:3:4"}, "--time"},
		{"--time", []string{"--time", "'02:00:00'"}, "--time"},
		{"--time", []string{"--time", "%j"}, "--time"},
		{"--partition", []string{"--partition", "debug\necho INJECTED"}, "--partition"},
		{"--partition", []string{"--partition", "a b"}, "--partition"},
		{"--partition", []string{"--partition", "a;touch PWNED"}, "--partition"},
		{"--partition", []string{"--partition", "$(touch PWNED)"}, "--partition"},
		{"--partition", []string{"--partition", "`id`"}, "--partition"},
		{"--partition", []string{"--partition", "\"p\""}, "--partition"},
		{"--partition", []string{"--partition", "p#x"}, "--partition"},
		{"--partition", []string{"--partition", "hetjob"}, "--partition"},
		{"--partition", []string{"--partition", ","}, "--partition"},
		{"--dprl", []string{"--dprl", "/opt/dprl\necho INJECTED"}, "--dprl"},
		{"--dprl", []string{"--dprl", "/opt/dprl\x00x"}, "--dprl"},
		{"--dprl", []string{"--dprl", "/opt/dprl\u2028x"}, "--dprl"},
		{"--dprl", []string{"--dprl", "/opt/dprl\x1b[2Jx"}, "--dprl"},
		{"config", []string{"CONFIG=" + nlCfg}, "config"},
	}
	for i, tc := range cases {
		dir := filepath.Join(root, "scripts", strconv.Itoa(i))
		args := []string{"sweep", "slurm", cfg, "--shards", "2", "--out", out, "--dir", dir}
		if c, ok := strings.CutPrefix(tc.extra[0], "CONFIG="); ok {
			args[2] = c
		} else {
			args = append(args, tc.extra...)
		}
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s %q: exit %d, stderr %q; want 2 naming %s", tc.flag, tc.extra, code, stderr, tc.want)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s %q: %s was written (err %v)", tc.flag, tc.extra, dir, err)
		}
	}
	noPwned(t, root)
}

// TestSweepSlurmTimeAndPartitionFormats: every Slurm time format and comma-separated
// partition lists are accepted and reach their #SBATCH line unchanged.
func TestSweepSlurmTimeAndPartitionFormats(t *testing.T) {
	root := t.TempDir()
	cfg, _ := sweepConfigFile(t, root, "s.yaml", "")
	for i, tc := range []struct{ time, partition string }{
		{"30", "debug"},
		{"30:00", "gpu,debug"},
		{"02:00:00", "long_q.v2"},
		{"1-0", "a-b"},
		{"2-12", "P1"},
		{"1-02:30", "debug"},
		{"1-02:30:00", "debug"},
		{"UNLIMITED", "debug"},
		{"infinite", "debug"},
		{"0", "debug"},
	} {
		dir := filepath.Join(root, "s", strconv.Itoa(i))
		code, _, stderr := runCLI(t, "sweep", "slurm", cfg, "--shards", "2", "--out", filepath.Join(root, "out"), "--dir", dir,
			"--time", tc.time, "--partition", tc.partition)
		if code != 0 {
			t.Errorf("--time %q --partition %q: exit %d: %s", tc.time, tc.partition, code, stderr)
			continue
		}
		for _, f := range []string{"run.sbatch", "merge.sbatch"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			d := sbatchDirectives(t, f, string(b))
			if !slices.Contains(d, "--time="+tc.time) || !slices.Contains(d, "--partition="+tc.partition) {
				t.Errorf("%s: directives %q lack --time=%s --partition=%s", f, d, tc.time, tc.partition)
			}
		}
	}
}

// sbatchDirectives returns the arguments of the #SBATCH lines of a batch script's header (the
// lines before the first command). It requires every #SBATCH line to be one argument that
// sbatch reads back literally: sbatch (src/sbatch/opt.c, _get_argument) splits at whitespace,
// removes quotes and backslashes, ends the line at an unquoted # and blanks "packjob".
func sbatchDirectives(t *testing.T, name, script string) []string {
	t.Helper()
	var args []string
	for i, line := range strings.Split(script, "\n") {
		if i == 0 && strings.HasPrefix(line, "#!") {
			continue
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if !strings.HasPrefix(trimmed, "#") {
			break
		}
		rest, ok := strings.CutPrefix(line, "#SBATCH")
		if !ok {
			continue
		}
		arg, ok := strings.CutPrefix(rest, " ")
		low := strings.ToLower(arg)
		if !ok || arg == "" || strings.ContainsAny(arg, " \t\r\v\f\"'\\#") || strings.Contains(low, "packjob") || strings.Contains(low, "hetjob") {
			t.Errorf("%s: #SBATCH line %q is not one argument that sbatch reads back literally", name, line)
			continue
		}
		args = append(args, arg)
	}
	return args
}

// stubs writes fake sbatch and dprl executables. sbatch records its argv in log/sbatch.N,
// runs the batch script with bash (as task 0 of an array script, with
// SLURM_ARRAY_TASK_COUNT=shards) and prints "N;stub" (--parsable with a cluster name). dprl
// records $0 and its argv in log/dprl.XXXXXX. Arguments are recorded NUL-separated.
func stubs(t *testing.T, bin, dprl, log string) {
	t.Helper()
	testfiles.Write(t, "", map[string]string{
		filepath.Join(bin, "sbatch"): `#!/bin/bash
set -euo pipefail
n=$(find "$STUB_LOG" -name 'sbatch.*' | wc -l)
printf '%s\0' "$@" >"$STUB_LOG/sbatch.$n"
script=${!#}
if grep -q '^#SBATCH --array=' "$script"; then
	SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=$STUB_SHARDS bash "$script" >"$STUB_LOG/job.$n.out" 2>&1
else
	SLURM_JOB_ID=$((4242 + n)) bash "$script" >"$STUB_LOG/job.$n.out" 2>&1
fi
echo "$((4242 + n));stub"
`,
		dprl: `#!/bin/bash
f=$(mktemp "$STUB_LOG/dprl.XXXXXX")
printf '%s\0' "$0" "$@" >"$f"
`,
	}, 0o755)
	if err := os.MkdirAll(log, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSweepSlurmScriptsRunLiterally generates the Slurm scripts with hostile values in every
// field that is allowed to hold them (the dprl binary's path, the configuration's path, the
// configuration's name, the directory of the scripts), checks them with `bash -n`, checks
// the #SBATCH lines as sbatch reads them, and runs submit.sh with a stub sbatch (which runs the
// scripts) and a stub dprl on PATH: dprl must receive exactly the literal values, one argument
// each, and no injected command may run.
func TestSweepSlurmScriptsRunLiterally(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	root := t.TempDir()
	cfg, _ := sweepConfigFile(t, filepath.Join(root, "cfg "+hostile), "s "+hostile+".yaml", title)
	dprl := filepath.Join(root, "bin "+hostile, "dprl "+hostile)
	bin, log, cwd := filepath.Join(root, "stubs"), filepath.Join(root, "log"), filepath.Join(root, "cwd")
	stubs(t, bin, dprl, log)
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out_1.x-y+z,w=v@h:p~q")
	dir := filepath.Join(root, "scripts "+hostile)
	code, stdout, stderr := runCLI(t, "sweep", "slurm", cfg, "--out", out, "--shards", "2", "--parallel", "1", "--workers", "1",
		"--dprl", dprl, "--time", "1-02:03:04", "--partition", "debug,gpu", "--dir", dir)
	if code != 0 {
		t.Fatalf("sweep slurm: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "submit.sh") {
		t.Errorf("stdout %q does not say how to submit", stdout)
	}
	scripts := map[string]string{}
	for _, f := range []string{"run.sbatch", "merge.sbatch", "submit.sh"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		scripts[f] = string(b)
		if o, err := exec.Command("bash", "-n", filepath.Join(dir, f)).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v: %s", f, err, o)
		}
	}
	jobName := regexp.MustCompile(`^--job-name=dprl-[a-z0-9-]+-(run|merge)$`)
	for f, want := range map[string][]string{
		"run.sbatch":   {"--output=" + out + "/slurm/run-%A_%a.out", "--cpus-per-task=1", "--ntasks=1", "--time=1-02:03:04", "--partition=debug,gpu", "--array=0-1%1"},
		"merge.sbatch": {"--output=" + out + "/slurm/merge-%j.out", "--cpus-per-task=1", "--ntasks=1", "--time=1-02:03:04", "--partition=debug,gpu"},
	} {
		got := sbatchDirectives(t, f, scripts[f])
		var rest []string
		for _, a := range got {
			if strings.HasPrefix(a, "--job-name=") {
				if !jobName.MatchString(a) {
					t.Errorf("%s: %q is not a safe job name", f, a)
				}
				continue
			}
			rest = append(rest, a)
		}
		slices.Sort(rest)
		slices.Sort(want)
		if !slices.Equal(rest, want) {
			t.Errorf("%s: #SBATCH arguments\n%q\nwant (besides --job-name)\n%q", f, rest, want)
		}
	}

	sub := exec.Command("bash", filepath.Join(dir, "submit.sh"))
	sub.Dir = cwd
	sub.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "STUB_LOG="+log, "STUB_SHARDS=2")
	o, err := sub.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, o)
	}
	if string(o) != "4242\n4243\n" {
		t.Errorf("submit.sh printed %q, want the two job IDs 4242 and 4243", o)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	sb := testfiles.ArgvFiles(t, log, "sbatch.")
	wantSb := [][]string{
		{"--parsable", filepath.Join(realDir, "run.sbatch")},
		{"--parsable", "--dependency=afterok:4242", filepath.Join(realDir, "merge.sbatch")},
	}
	if !slices.EqualFunc(sb, wantSb, slices.Equal[[]string]) {
		t.Errorf("sbatch calls\n%q\nwant\n%q", sb, wantSb)
	}
	if fi, err := os.Stat(filepath.Join(out, "slurm")); err != nil || !fi.IsDir() {
		t.Errorf("submit.sh did not create %s/slurm (for the logs): %v", out, err)
	}
	runs := testfiles.ArgvFiles(t, log, "dprl.")
	wantRuns := [][]string{
		{dprl, "sweep", "merge", cfg, "--out", out},
		{dprl, "sweep", "run", cfg, "--out", out, "--workers", "1", "--quiet"},
	}
	slices.SortFunc(runs, func(a, b []string) int { return slices.Compare(a, b) })
	if !slices.EqualFunc(runs, wantRuns, slices.Equal[[]string]) {
		jobs, _ := filepath.Glob(filepath.Join(log, "job.*"))
		var logs []byte
		for _, j := range jobs {
			b, _ := os.ReadFile(j)
			logs = append(logs, b...)
		}
		t.Errorf("dprl was run as\n%q\nwant\n%q\njob output:\n%s", runs, wantRuns, logs)
	}
	noPwned(t, root)
	if ents, err := os.ReadDir(cwd); err != nil || len(ents) != 0 {
		t.Errorf("the scripts wrote into the working directory: %v %v", ents, err)
	}
}

// k8sObjects are the objects of a directory of manifests, decoded strictly.
type k8sObjects struct {
	configMaps map[string]*corev1.ConfigMap
	jobs       map[string]*batchv1.Job // by file name (one Job a file)
}

// decodeStrict decodes one YAML document into v: YAML to JSON (duplicate keys are errors),
// then JSON into the API type with unknown fields refused.
func decodeStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// decodeManifests decodes every document of every .yaml file in dir as a ConfigMap or a Job.
func decodeManifests(t *testing.T, dir string) k8sObjects {
	t.Helper()
	objs := k8sObjects{configMaps: map[string]*corev1.ConfigMap{}, jobs: map[string]*batchv1.Job{}}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Ext(f) != ".yaml" {
			t.Errorf("%s: not a .yaml manifest", f)
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(fh))
		for {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var tm struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if j, err := yaml.YAMLToJSON(doc); err != nil {
				t.Fatalf("%s: %v\n%s", f, err, doc)
			} else if string(bytes.TrimSpace(j)) == "null" {
				continue // comments only
			} else if err := json.Unmarshal(j, &tm); err != nil {
				t.Fatalf("%s: %v\n%s", f, err, doc)
			}
			switch tm.APIVersion + " " + tm.Kind {
			case "v1 ConfigMap":
				var cm corev1.ConfigMap
				if err := decodeStrict(doc, &cm); err != nil {
					t.Fatalf("%s: ConfigMap: %v\n%s", f, err, doc)
				}
				if objs.configMaps[cm.Name] != nil {
					t.Errorf("two ConfigMaps %q", cm.Name)
				}
				objs.configMaps[cm.Name] = &cm
			case "batch/v1 Job":
				var j batchv1.Job
				if err := decodeStrict(doc, &j); err != nil {
					t.Fatalf("%s: Job: %v\n%s", f, err, doc)
				}
				if objs.jobs[filepath.Base(f)] != nil {
					t.Errorf("%s: two Jobs", f)
				}
				objs.jobs[filepath.Base(f)] = &j
			default:
				t.Fatalf("%s: unexpected object %q %q", f, tm.APIVersion, tm.Kind)
			}
		}
		fh.Close()
	}
	return objs
}

// under reports whether p (an absolute clean pod path) lies under dir.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// k8sWant is what a generated sweep must do in its pods.
type k8sWant struct {
	dprl, claim, mount, out string // the command, the claim, its mount and the run directory in the pods
	config                  []byte // the configuration file's content (nil: embedded)
	embedded                string // the embedded reproduction's name
	shards, parallel        int
}

// checkJob checks one Job's pod: its names, volumes and mounts, and that the configuration
// and the run directory it is given lie on its volumes (the configuration in a ConfigMap of
// the generated files with the file's bytes, the run directory on the claim, writable).
func checkJob(t *testing.T, file string, j *batchv1.Job, objs k8sObjects, verb string, w k8sWant) {
	t.Helper()
	label := func(what, s string) {
		if errs := validation.IsDNS1123Label(s); len(errs) > 0 {
			t.Errorf("%s: %s %q is not a DNS-1123 label: %v", file, what, s, errs)
		}
	}
	label("Job name", j.Name)
	ps := j.Spec.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %q", file, ps.RestartPolicy)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%s: %d containers", file, len(ps.Containers))
	}
	c := ps.Containers[0]
	label("container name", c.Name)
	vols := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		label("volume name", v.Name)
		vols[v.Name] = v
		switch {
		case v.PersistentVolumeClaim != nil:
			if v.PersistentVolumeClaim.ClaimName != w.claim {
				t.Errorf("%s: claim %q, want %q", file, v.PersistentVolumeClaim.ClaimName, w.claim)
			}
		case v.ConfigMap != nil:
			if objs.configMaps[v.ConfigMap.Name] == nil {
				t.Errorf("%s: volume %q refers to ConfigMap %q, which the generated files do not hold", file, v.Name, v.ConfigMap.Name)
			}
		default:
			t.Errorf("%s: volume %q is neither the claim nor a ConfigMap", file, v.Name)
		}
	}
	for i, m := range c.VolumeMounts {
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("%s: mount of unknown volume %q", file, m.Name)
		}
		if !path.IsAbs(m.MountPath) || path.Clean(m.MountPath) != m.MountPath || m.MountPath == "/" || strings.Contains(m.MountPath, ":") {
			t.Errorf("%s: mountPath %q", file, m.MountPath)
		}
		for _, o := range c.VolumeMounts[:i] {
			if under(m.MountPath, o.MountPath) || under(o.MountPath, m.MountPath) {
				t.Errorf("%s: mounts %q and %q overlap", file, m.MountPath, o.MountPath)
			}
		}
	}
	// mountOf returns the mount holding p and p relative to it.
	mountOf := func(p string) (corev1.VolumeMount, string, bool) {
		for _, m := range c.VolumeMounts {
			if under(p, m.MountPath) {
				return m, strings.TrimPrefix(strings.TrimPrefix(p, m.MountPath), "/"), true
			}
		}
		return corev1.VolumeMount{}, "", false
	}
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) < 6 || argv[0] != w.dprl || argv[1] != "sweep" || argv[2] != verb || argv[4] != "--out" {
		t.Fatalf("%s: command %q, want [%q sweep %s CONFIG --out DIR …]", file, argv, w.dprl, verb)
	}
	cfg, out := argv[3], argv[5]
	if out != w.out {
		t.Errorf("%s: --out %q in the pods, want %q", file, out, w.out)
	}
	if m, _, ok := mountOf(out); !ok || vols[m.Name].PersistentVolumeClaim == nil || m.ReadOnly || m.MountPath != w.mount {
		t.Errorf("%s: the run directory %q is not on the writable claim's mount at %s (mounts %+v)", file, out, w.mount, c.VolumeMounts)
	}
	if w.config == nil {
		if cfg != w.embedded {
			t.Errorf("%s: config %q, want the embedded reproduction %q", file, cfg, w.embedded)
		}
	} else {
		m, rel, ok := mountOf(cfg)
		var cm *corev1.ConfigMap
		if ok && vols[m.Name].ConfigMap != nil {
			cm = objs.configMaps[vols[m.Name].ConfigMap.Name]
		}
		switch {
		case cm == nil:
			t.Errorf("%s: the configuration %q is not on a ConfigMap's mount (mounts %+v)", file, cfg, c.VolumeMounts)
		case !m.ReadOnly:
			t.Errorf("%s: the ConfigMap is mounted writable", file)
		default:
			key := rel
			if items := vols[m.Name].ConfigMap.Items; len(items) > 0 {
				key = ""
				for _, it := range items {
					if it.Path == rel {
						key = it.Key
					}
				}
			}
			if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
				t.Errorf("%s: ConfigMap key %q: %v", file, key, errs)
			}
			if got, ok := cm.Data[key]; !ok || got != string(w.config) {
				t.Errorf("%s: ConfigMap %s key %q (present %v) does not hold the configuration file's bytes", file, cm.Name, key, ok)
			}
		}
	}
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "/") {
			if _, _, ok := mountOf(a); !ok {
				t.Errorf("%s: argument %q is a path on no volume", file, a)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// checkK8s decodes the manifests in dir and checks both Jobs and the ConfigMap.
func checkK8s(t *testing.T, dir string, w k8sWant) {
	t.Helper()
	objs := decodeManifests(t, dir)
	for name, cm := range objs.configMaps {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("ConfigMap name %q: %v", name, errs)
		}
		for k := range cm.Data {
			if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
				t.Errorf("ConfigMap %s key %q: %v", name, k, errs)
			}
		}
	}
	if w.config == nil && len(objs.configMaps) != 0 {
		t.Errorf("an embedded reproduction needs no ConfigMap, got %d", len(objs.configMaps))
	}
	if w.config != nil && len(objs.configMaps) != 1 {
		t.Errorf("want one ConfigMap, got %d", len(objs.configMaps))
	}
	run, merge := objs.jobs["run-job.yaml"], objs.jobs["merge-job.yaml"]
	if run == nil || merge == nil || len(objs.jobs) != 2 {
		t.Fatalf("want the Jobs run-job.yaml and merge-job.yaml, got %v", objs.jobs)
	}
	s := run.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil || int(*s.Completions) != w.shards ||
		s.Parallelism == nil || int(*s.Parallelism) != w.parallel {
		t.Errorf("run Job spec: completionMode %v completions %v parallelism %v, want Indexed %d %d", s.CompletionMode, s.Completions, s.Parallelism, w.shards, w.parallel)
	}
	checkJob(t, "run-job.yaml", run, objs, "run", w)
	checkJob(t, "merge-job.yaml", merge, objs, "merge", w)
	if run.Name == merge.Name {
		t.Errorf("both Jobs are named %q", run.Name)
	}
	env := run.Spec.Template.Spec.Containers[0].Env
	if !slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == "DPRL_SHARDS" && e.Value == itoa(w.shards) }) {
		t.Errorf("run Job env %v lacks DPRL_SHARDS=%d", env, w.shards)
	}
}

// simulatePods runs the Jobs' commands as their pods would (dprl in-process), with each volume
// mount mapped to a directory of this machine: the claim to claim, a ConfigMap to a directory
// holding its keys as files. The shards run one after the other (JOB_COMPLETION_INDEX and the
// Job's DPRL_SHARDS), then the merge; it returns the run directory on claim.
func simulatePods(t *testing.T, dir, claim string) string {
	t.Helper()
	objs := decodeManifests(t, dir)
	sandbox := t.TempDir()
	argv := func(j *batchv1.Job) []string {
		c := j.Spec.Template.Spec.Containers[0]
		hostOf := map[string]string{}
		for _, m := range c.VolumeMounts {
			for _, v := range j.Spec.Template.Spec.Volumes {
				switch {
				case v.Name != m.Name:
				case v.PersistentVolumeClaim != nil:
					hostOf[m.MountPath] = claim
				case v.ConfigMap != nil:
					d := filepath.Join(sandbox, v.ConfigMap.Name)
					for k, data := range objs.configMaps[v.ConfigMap.Name].Data {
						if err := os.MkdirAll(d, 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(filepath.Join(d, k), []byte(data), 0o444); err != nil && !errors.Is(err, fs.ErrPermission) {
							t.Fatal(err)
						}
					}
					hostOf[m.MountPath] = d
				}
			}
		}
		args := append(slices.Clone(c.Command[1:]), c.Args...)
		for i, a := range args {
			for mp, h := range hostOf {
				if under(a, mp) {
					args[i] = filepath.Join(h, filepath.FromSlash(strings.TrimPrefix(a, mp)))
				}
			}
		}
		return args
	}
	run, merge := objs.jobs["run-job.yaml"], objs.jobs["merge-job.yaml"]
	var shards string
	for _, e := range run.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "DPRL_SHARDS" {
			shards = e.Value
		}
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("DPRL_SHARDS", shards)
	for i := 0; i < int(*run.Spec.Completions); i++ {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
		if code, _, stderr := runCLI(t, argv(run)...); code != 0 {
			t.Fatalf("shard %d: dprl %q: exit %d: %s", i, argv(run), code, stderr)
		}
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	t.Setenv("DPRL_SHARDS", "")
	a := argv(merge)
	if code, _, stderr := runCLI(t, a...); code != 0 {
		t.Fatalf("merge: dprl %q: exit %d: %s", a, code, stderr)
	}
	return a[4]
}

// TestSweepK8sManifestsWork: the Kubernetes manifests decode strictly into the API types, ship
// the configuration in a ConfigMap mounted read-only, and give the pods a run directory on the
// claim's mount; hostile values reach the pods as literal arguments.
func TestSweepK8sManifestsWork(t *testing.T) {
	root := t.TempDir()
	cfg, data := sweepConfigFile(t, root, "s.yaml", "")
	hcfg, hdata := sweepConfigFile(t, filepath.Join(root, "cfg "+hostile), "s "+hostile+".yaml", title)
	odd := "s1 " + hostile + " #c: {a}: [b] --- &x *y"
	for i, tc := range []struct {
		name     string
		args     []string
		w        k8sWant
		simulate bool
	}{
		{"relative --out", []string{cfg, "--out", "sweeps/s1"},
			k8sWant{dprl: "dprl", claim: "dprl-runs", mount: "/runs", out: "/runs/sweeps/s1", config: data, shards: 3, parallel: 2}, true},
		{"absolute --out under --mount", []string{cfg, "--out", "/runs/s1"},
			k8sWant{dprl: "dprl", claim: "dprl-runs", mount: "/runs", out: "/runs/s1", config: data, shards: 3, parallel: 2}, false},
		{"--mount", []string{cfg, "--out", "/data/sweeps/s1", "--mount", "/data"},
			k8sWant{dprl: "dprl", claim: "dprl-runs", mount: "/data", out: "/data/sweeps/s1", config: data, shards: 3, parallel: 2}, false},
		{"embedded", []string{"qiao-fig1", "--out", "s1"},
			k8sWant{dprl: "dprl", claim: "dprl-runs", mount: "/runs", out: "/runs/s1", embedded: "qiao-fig1", shards: 3, parallel: 2}, false},
		{"hostile values", []string{hcfg, "--out", odd, "--dprl", "/opt/" + hostile + "/dprl", "--claim", "runs.v2-x"},
			k8sWant{dprl: "/opt/" + hostile + "/dprl", claim: "runs.v2-x", mount: "/runs", out: "/runs/" + odd, config: hdata, shards: 3, parallel: 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(root, "k8s", strconv.Itoa(i))
			args := append([]string{"sweep", "k8s"}, tc.args...)
			args = append(args, "--shards", "3", "--parallel", "2", "--image", "registry.example:5000/dprl/dprl:v1.2@sha256:0123abcd", "--dir", dir)
			if !slices.Contains(args, "--claim") {
				args = append(args, "--claim", "dprl-runs")
			}
			code, _, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%q: exit %d: %s", args, code, stderr)
			}
			checkK8s(t, dir, tc.w)
			if tc.simulate && !t.Failed() {
				// The pods' view: the shards and the merge find the configuration and each
				// other's units on their volumes, and the outputs land on the claim.
				claim := filepath.Join(root, "claim", strconv.Itoa(i))
				out := simulatePods(t, dir, claim)
				rel := strings.TrimPrefix(tc.w.out, tc.w.mount+"/")
				if want := filepath.Join(claim, filepath.FromSlash(rel)); out != want {
					t.Errorf("the run directory on the claim is %s, want %s", out, want)
				}
				for _, f := range []string{"manifest.json", "summary.md"} {
					if _, err := os.Stat(filepath.Join(out, f)); err != nil {
						t.Errorf("after the merge Job: %v", err)
					}
				}
			}
		})
	}
}

// TestSweepK8sRefusesUnsafeValues: values the pods could not use, or that are not valid in a
// manifest, are refused with exit status 2 naming the flag, and nothing is written.
func TestSweepK8sRefusesUnsafeValues(t *testing.T) {
	root := t.TempDir()
	cfg, _ := sweepConfigFile(t, root, "s.yaml", "")
	nlCfg, _ := sweepConfigFile(t, root, "s\necho INJECTED.yaml", "")
	big := filepath.Join(root, "big.yaml")
	b, _ := os.ReadFile(cfg)
	b = append(b, bytes.Repeat([]byte("# padding to exceed what a ConfigMap holds\n"), 30000)...)
	if err := os.WriteFile(big, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "/elsewhere/s1"}, "--out"},
		{[]string{"--out", "../s1"}, "--out"},
		{[]string{"--out", "/runs/../etc/s1"}, "--out"},
		{[]string{"--out", "s1/../../x"}, "--out"},
		{[]string{"--out", "/runs"}, "--out"},
		{[]string{"--out", "."}, "--out"},
		{[]string{"--out", "s1\necho INJECTED"}, "--out"},
		{[]string{"--out", "s1", "--mount", "runs"}, "--mount"},
		{[]string{"--out", "s1", "--mount", "/"}, "--mount"},
		{[]string{"--out", "s1", "--mount", "/runs x"}, "--mount"},
		{[]string{"--out", "s1", "--mount", "/runs:rw"}, "--mount"},
		{[]string{"--out", "s1", "--mount", "/runs/../x"}, "--mount"},
		{[]string{"--out", "s1", "--mount", "/etc"}, "--mount"},
		{[]string{"--out", "s1", "--claim", "Runs"}, "--claim"},
		{[]string{"--out", "s1", "--claim", "a_b"}, "--claim"},
		{[]string{"--out", "s1", "--claim", "runs\nx: y"}, "--claim"},
		{[]string{"--out", "s1", "--image", "dprl\nx: y"}, "--image"},
		{[]string{"--out", "s1", "--image", "dprl latest"}, "--image"},
		{[]string{"--out", "s1", "--image", "\"dprl\""}, "--image"},
		{[]string{"--out", "s1", "--dprl", "dprl\nx"}, "--dprl"},
		{[]string{"--out", "s1", "--dprl", ""}, "--dprl"},
		{[]string{"--out", "s1", "CONFIG=" + nlCfg}, "config"},
		{[]string{"--out", "s1", "CONFIG=" + big}, "config"},
	} {
		dir := filepath.Join(root, "k8s", strconv.Itoa(i))
		args := []string{"sweep", "k8s", cfg, "--shards", "2", "--dir", dir}
		for _, a := range tc.args {
			if c, ok := strings.CutPrefix(a, "CONFIG="); ok {
				args[2] = c
			} else {
				args = append(args, a)
			}
		}
		if !slices.Contains(args, "--image") {
			args = append(args, "--image", "dprl:1")
		}
		if !slices.Contains(args, "--claim") {
			args = append(args, "--claim", "runs")
		}
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%q: %s was written (err %v)", tc.args, dir, err)
		}
	}
	noPwned(t, root)
}
