package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/dprl/dprl/internal/testfiles"
)

// validCluster is a cluster that passes ValidateSlurm and ValidateK8s.
func validCluster() Cluster {
	return Cluster{Name: "qiao-fig1", Dprl: "/opt/dprl", Config: "/cfg/q.yaml", ConfigData: []byte("name: q\n"), Out: "/runs/q",
		Shards: 4, Parallel: 2, Workers: 3, Time: "02:00:00", Partition: "debug", Claim: "runs", Mount: "/runs", Image: "dprl:1"}
}

// TestClusterRefusesUnsafeValues: a value with a control character in any field, or a Slurm
// value that sbatch would not read back literally, or a Kubernetes value the pods could not
// use, is refused by the validation of its launcher with an error naming the flag; SlurmFiles
// and K8sFiles refuse them too, and SlurmScripts panics rather than write them.
func TestClusterRefusesUnsafeValues(t *testing.T) {
	ctl := []string{"\n", "\r", "\x00", "\x1b", "\x7f", "\u0085", "\u2028", "\u2029", "\u202e", "\ufeff", "\xff"}
	type tc struct {
		flag  string
		set   func(*Cluster)
		slurm bool // refused by ValidateSlurm
		k8s   bool // refused by ValidateK8s
	}
	var cases []tc
	for _, s := range ctl {
		cases = append(cases,
			tc{"--dprl", func(c *Cluster) { c.Dprl = "/opt/dprl" + s + "echo INJECTED" }, true, true},
			tc{"config", func(c *Cluster) { c.Config = "/cfg/q" + s + "echo INJECTED.yaml" }, true, true},
			tc{"--out", func(c *Cluster) { c.Out = "/runs/q" + s + "echo INJECTED" }, true, true},
			tc{"--time", func(c *Cluster) { c.Time = "02:00:00" + s + "#SBATCH --wrap=id" }, true, true},
			tc{"--partition", func(c *Cluster) { c.Partition = "debug" + s + "echo INJECTED" }, true, true},
			tc{"--image", func(c *Cluster) { c.Image = "dprl:1" + s + "x" }, true, true},
			tc{"--claim", func(c *Cluster) { c.Claim = "runs" + s + "x" }, true, true},
			tc{"--mount", func(c *Cluster) { c.Mount = "/runs" + s + "x" }, true, true},
		)
	}
	for _, v := range []string{"/runs/a b", "/runs/\"q\"", "/runs/'q'", "/runs/$(id)", "/runs/`id`", "/runs/a;id", "/runs/%A", "/runs/%%", `/runs/a\b`, "/runs/a#b", "/runs/HETJOB", "/runs/packjob", "/runs/é", "runs/q"} {
		cases = append(cases, tc{"--out", func(c *Cluster) { c.Out = v }, true, false})
	}
	for _, v := range []string{"2h", "1-", ":30", "1:2:3:4", "'02:00'", "%j", "02:00:00 --wrap=id", "$(id)", "1-2-3", "forever"} {
		cases = append(cases, tc{"--time", func(c *Cluster) { c.Time = v }, true, true})
	}
	for _, v := range []string{"a b", "a;b", "$(id)", "`id`", "\"p\"", "p#x", "hetjob", "x,packjob", ",", "a,", "p%j", strings.Repeat("p", 300)} {
		cases = append(cases, tc{"--partition", func(c *Cluster) { c.Partition = v }, true, true})
	}
	for _, v := range []string{"/elsewhere/q", "/runs", "/runs/", "../q", "q/../../x", "/runs/../etc/q", ".", ""} {
		cases = append(cases, tc{"--out", func(c *Cluster) { c.Out = v }, v == "" || !strings.HasPrefix(v, "/"), true})
	}
	for _, v := range []string{"runs", "/", "/runs x", "/runs:rw", "/runs/../x", "/runs/./x", "/runs/", "/etc", "/etc/dprl-config", "/etc/dprl-config/x", ""} {
		cases = append(cases, tc{"--mount", func(c *Cluster) { c.Mount = v }, false, true})
	}
	for _, v := range []string{"Runs", "a_b", "-runs", "runs-", "a..b", strings.Repeat("a", 254), ""} {
		cases = append(cases, tc{"--claim", func(c *Cluster) { c.Claim = v }, false, true})
	}
	for _, v := range []string{"dprl latest", "\"dprl\"", "-dprl", "dprl;id", "$(id)", "", "d" + strings.Repeat("x", maxImage)} {
		cases = append(cases, tc{"--image", func(c *Cluster) { c.Image = v }, false, true})
	}
	cases = append(cases, tc{"--image", func(c *Cluster) { c.Image = "d" + strings.Repeat("x", maxImage-1) }, false, false}) // the longest
	cases = append(cases,
		tc{"--dprl", func(c *Cluster) { c.Dprl = "" }, true, true},
		tc{"config", func(c *Cluster) { c.ConfigData = bytes.Repeat([]byte("#\n"), MaxConfigMapBytes) }, false, true},
		tc{"config", func(c *Cluster) { c.ConfigData = []byte("name: \xff\n") }, false, true},
		tc{"config", func(c *Cluster) { c.ConfigData, c.Config = nil, "/cfg/q.yaml" }, false, true},
		tc{"config", func(c *Cluster) { c.ConfigData, c.Config = nil, "-q" }, true, true},
		tc{"config", func(c *Cluster) { c.Config = "-q" }, true, true},
		tc{"--dprl", func(c *Cluster) { c.Dprl = "-a" }, true, true},
	)
	for _, tc := range cases {
		c := validCluster()
		tc.set(&c)
		check := func(what string, err error, want bool) {
			t.Helper()
			switch {
			case want && (err == nil || !strings.HasPrefix(err.Error(), tc.flag+":")):
				t.Errorf("%s %+v: %s = %v, want an error naming %s", tc.flag, c, what, err, tc.flag)
			case !want && err != nil:
				t.Errorf("%s %+v: %s = %v, want nil", tc.flag, c, what, err)
			}
		}
		check("ValidateSlurm", c.ValidateSlurm(), tc.slurm)
		check("ValidateK8s", c.ValidateK8s(), tc.k8s)
		files, err := c.SlurmFiles()
		check("SlurmFiles", err, tc.slurm)
		if err != nil && files != nil {
			t.Errorf("SlurmFiles returned files with error %v", err)
		}
		_, err = c.K8sFiles()
		check("K8sFiles", err, tc.k8s)
		if tc.slurm {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %+v: SlurmScripts did not panic", tc.flag, c)
					}
				}()
				c.SlurmScripts()
			}()
		}
	}
	c := validCluster()
	if err := c.ValidateSlurm(); err != nil {
		t.Errorf("ValidateSlurm(valid) = %v", err)
	}
	if err := c.ValidateK8s(); err != nil {
		t.Errorf("ValidateK8s(valid) = %v", err)
	}
}

// TestClusterJobName: whatever the configuration's name, the job names are DNS-1123 labels
// that sbatch reads back literally.
func TestClusterJobName(t *testing.T) {
	ok := regexp.MustCompile(`^dprl-[a-z0-9]([a-z0-9-]*[a-z0-9])?-(run|merge|config)$`)
	for _, name := range []string{"", "qiao-fig1", "x $(touch PWNED) `id` ;'q' \"d\" \n#%A", "HetJob", "packjob-hetjob", "---",
		"é", strings.Repeat("ab-", 30), strings.Repeat("a", 39) + "-b", "a\u2028b"} {
		for _, s := range []string{"run", "merge", "config"} {
			n := Cluster{Name: name}.jobName(s)
			if !ok.MatchString(n) || len(validation.IsDNS1123Label(n)) > 0 || strings.Contains(n, "hetjob") || strings.Contains(n, "packjob") {
				t.Errorf("jobName(%q, %s) = %q", name, s, n)
			}
		}
	}
}

// TestClusterPodOut: the run directory in the pods is MOUNT/OUT for a relative OUT and OUT
// for an absolute OUT under MOUNT.
func TestClusterPodOut(t *testing.T) {
	for _, tc := range []struct{ out, mount, want string }{
		{"sweeps/s1", "/runs", "/runs/sweeps/s1"},
		{"sweeps/s1/", "/runs", "/runs/sweeps/s1"},
		{"./s1", "/runs", "/runs/s1"},
		{"/runs/s1", "/runs", "/runs/s1"},
		{"/data/x/s1", "/data/x", "/data/x/s1"},
		{"s 1 $(id) 'q'", "/runs", "/runs/s 1 $(id) 'q'"},
	} {
		got, err := Cluster{Out: tc.out, Mount: tc.mount}.PodOut()
		if err != nil || got != tc.want {
			t.Errorf("PodOut(%q, %q) = %q, %v; want %q", tc.out, tc.mount, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ out, mount string }{{"/runsx/s1", "/runs"}, {"/x", "/runs"}, {"s1/../..", "/runs"}, {"/runs", "/runs"}, {"", "/runs"}} {
		if got, err := (Cluster{Out: tc.out, Mount: tc.mount}).PodOut(); err == nil || !strings.HasPrefix(err.Error(), "--out:") {
			t.Errorf("PodOut(%q, %q) = %q, %v; want an --out error", tc.out, tc.mount, got, err)
		}
	}
}

// TestClusterSlurmFilesRun runs the generated scripts with bash, a stub sbatch (which runs the
// batch scripts) and a stub dprl: the values with shell metacharacters reach dprl literally.
func TestClusterSlurmFilesRun(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	root := t.TempDir()
	hostile := "x $(touch PWNED1) `touch PWNED2` ;touch PWNED3; 'q' \"d\" \\ %A * ! # ~ $HOME é"
	bin, log, cwd := filepath.Join(root, "bin"), filepath.Join(root, "log"), filepath.Join(root, "cwd")
	dprl := filepath.Join(root, "dprl "+hostile)
	for _, d := range []string{bin, log, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "sbatch"), "#!/bin/bash\nset -eu\nn=$(find \"$STUB_LOG\" -name 'sbatch.*' | wc -l)\nprintf '%s\\0' \"$@\" >\"$STUB_LOG/sbatch.$n\"\n"+
		"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=4 bash \"${!#}\"\necho \"$((7 + n))\"\n")
	write(dprl, "#!/bin/bash\nf=$(mktemp \"$STUB_LOG/dprl.XXXXXX\")\nprintf '%s\\0' \"$0\" \"$@\" >\"$f\"\n")
	c := validCluster()
	c.Dprl, c.Config, c.Out = dprl, filepath.Join(root, "cfg "+hostile+".yaml"), filepath.Join(root, "out")
	files, err := c.SlurmFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"run.sbatch", "merge.sbatch", "submit.sh"} {
		write(filepath.Join(root, n), files[n])
		if o, err := exec.Command("bash", "-n", filepath.Join(root, n)).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v %s", n, err, o)
		}
	}
	cmd := exec.Command("bash", filepath.Join(root, "submit.sh"))
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "STUB_LOG="+log)
	if o, err := cmd.CombinedOutput(); err != nil || string(o) != "7\n8\n" {
		t.Fatalf("submit.sh: %v, output %q", err, o)
	}
	got := testfiles.ArgvFiles(t, log, "dprl.")
	slices.SortFunc(got, slices.Compare)
	want := [][]string{
		{c.Dprl, "sweep", "merge", c.Config, "--out", c.Out},
		{c.Dprl, "sweep", "run", c.Config, "--out", c.Out, "--workers", "3", "--quiet"},
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("dprl ran as\n%q\nwant\n%q", got, want)
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("an injected command ran: %v in the working directory", ents)
	}
}

// strictDecode decodes one YAML document into v: YAML to JSON with duplicate keys refused,
// then JSON with unknown fields refused.
func strictDecode(t *testing.T, doc string, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
}

// TestClusterK8sManifestsDecode: the manifests decode strictly into the API types, and every
// value (the command, the paths, the configuration's bytes) comes back exactly.
func TestClusterK8sManifestsDecode(t *testing.T) {
	c := validCluster()
	c.Name = "x $(id) \"q\" HetJob"
	c.Dprl = "/opt/d prl/$(id) `id` 'q' \"d\" \\ #: {a} [b] &x *y !t %A"
	c.Config = "/host/my config.yaml"
	c.ConfigData = []byte("family: tabular\n--- \n...\n\tname: \"q\"  \r\n# c\n\u2028 é \\ 'x' {a: [b]}\n\n\n")
	c.Out = "s1 #: {a} --- &x *y 'q' \"d\""
	c.Image = "registry.example:5000/dprl/dprl:v1@sha256:0123"
	c.Claim = "runs.v2"
	c.Mount = "/data/runs"
	files, err := c.K8sFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files %v", slices.Sorted(func(yield func(string) bool) {
			for k := range files {
				if !yield(k) {
					return
				}
			}
		}))
	}
	docs := strings.Split(files["run-job.yaml"], "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("run-job.yaml: %d documents, want the ConfigMap and the Job:\n%s", len(docs), files["run-job.yaml"])
	}
	var cm corev1.ConfigMap
	strictDecode(t, docs[0], &cm)
	var run, merge batchv1.Job
	strictDecode(t, docs[1], &run)
	strictDecode(t, files["merge-job.yaml"], &merge)
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || len(validation.IsDNS1123Label(cm.Name)) > 0 {
		t.Errorf("ConfigMap %q %q %q", cm.APIVersion, cm.Kind, cm.Name)
	}
	key := "config.yaml" // "my config.yaml" is not a ConfigMap key
	if got, ok := cm.Data[key]; !ok || got != string(c.ConfigData) || len(cm.Data) != 1 {
		t.Errorf("ConfigMap data %q, want %q: %q", cm.Data, key, c.ConfigData)
	}
	for _, j := range []*batchv1.Job{&run, &merge} {
		verb := map[bool]string{true: "run", false: "merge"}[j == &run]
		if j.APIVersion != "batch/v1" || j.Kind != "Job" || len(validation.IsDNS1123Label(j.Name)) > 0 {
			t.Errorf("Job %q %q %q", j.APIVersion, j.Kind, j.Name)
		}
		ps := j.Spec.Template.Spec
		ct := ps.Containers[0]
		want := []string{c.Dprl, "sweep", verb, ConfigMountPath + "/" + key, "--out", "/data/runs/" + c.Out}
		if verb == "run" {
			want = append(want, "--workers", "3", "--quiet")
		}
		if !slices.Equal(ct.Command, want) || len(ct.Args) != 0 {
			t.Errorf("%s command %q, want %q", verb, ct.Command, want)
		}
		if ct.Image != c.Image {
			t.Errorf("image %q", ct.Image)
		}
		wantMounts := []corev1.VolumeMount{{Name: "runs", MountPath: "/data/runs"}, {Name: "config", MountPath: ConfigMountPath, ReadOnly: true}}
		if !slices.Equal(ct.VolumeMounts, wantMounts) {
			t.Errorf("%s mounts %+v", verb, ct.VolumeMounts)
		}
		if len(ps.Volumes) != 2 || ps.Volumes[0].PersistentVolumeClaim == nil || ps.Volumes[0].PersistentVolumeClaim.ClaimName != "runs.v2" ||
			ps.Volumes[1].ConfigMap == nil || ps.Volumes[1].ConfigMap.Name != cm.Name {
			t.Errorf("%s volumes %+v", verb, ps.Volumes)
		}
	}
	if run.Spec.CompletionMode == nil || *run.Spec.CompletionMode != batchv1.IndexedCompletion || *run.Spec.Completions != 4 || *run.Spec.Parallelism != 2 {
		t.Errorf("run spec %+v", run.Spec)
	}
	if env := run.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Name != "DPRL_SHARDS" || env[0].Value != "4" {
		t.Errorf("env %+v", env)
	}
	if q := run.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.Value() != 3 {
		t.Errorf("cpu request %v", q.String())
	}

	// An embedded reproduction: passed by name, no ConfigMap, no config volume.
	c.Config, c.ConfigData = "qiao-fig1", nil
	files, err = c.K8sFiles()
	if err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	strictDecode(t, files["run-job.yaml"], &j)
	if ct := j.Spec.Template.Spec.Containers[0]; ct.Command[3] != "qiao-fig1" || len(ct.VolumeMounts) != 1 || len(j.Spec.Template.Spec.Volumes) != 1 {
		t.Errorf("embedded: %+v", j.Spec.Template.Spec)
	}
}

// TestConfigKeyLength: the configuration's base name is its ConfigMap key up to 253 bytes;
// a longer one (or one that is not a key) becomes config.yaml.
func TestConfigKeyLength(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"q.yaml", "q.yaml"},
		{strings.Repeat("a", 248) + ".yaml", strings.Repeat("a", 248) + ".yaml"},
		{strings.Repeat("a", 249) + ".yaml", "config.yaml"},
		{"a b.yaml", "config.yaml"},
		{"..q", "config.yaml"},
	} {
		c := validCluster()
		c.Config = "/cfg/" + tc.base
		if got := c.configKey(); got != tc.want {
			t.Errorf("configKey of %d-byte base %.20q… = %.20q…, want %.20q…", len(tc.base), tc.base, got, tc.want)
		}
	}
}
