package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		cfg        service.Config
		l          service.Listen
		tok        service.Tokens
		tokensFile string
		cpuProfile string
		storeURL   string
		advertise  string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve private agents to real users over HTTP (docs/serve.md)",
		Long: "Serve the curator side of dprl's agents behind an HTTP/JSON API with a durable embedded store.\n" +
			"Tokens come from --tokens-file, else $DPRL_ADMIN_TOKEN/$DPRL_CLIENT_TOKEN, else they are generated once\n" +
			"into <data>/tokens.json (never from the command line). SIGTERM or SIGINT drains: requests in flight are committed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if cfg.MaxInflightBytes <= 0 {
				return inputerr.New("--max-inflight-bytes: a positive number of bytes, got %d", cfg.MaxInflightBytes)
			}
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfile(&err)
			defer tuneGC(cfg.MaxInflightBytes + 32<<20)()
			// The address and the TLS files first: a busy port or a bad certificate fails
			// before the data directory is created and before "listening" is printed.
			given, err := tokensFrom(cmd, tokensFile)
			if err != nil {
				return err
			}
			if storeURL != "" {
				if err := checkStoreURL(storeURL, given); err != nil {
					return err
				}
			}
			bound, err := service.Bind(l)
			if err != nil {
				return inputerr.Error{Err: err}
			}
			if storeURL != "" {
				cfg.AdminToken, cfg.ClientToken, cfg.Registry = given.Admin, given.Client, newRegistry()
				cfg.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, "dprl serve: "+f+"\n", a...) }
				return serveShared(cmd, cfg, bound, storeURL, advertise, stdout)
			}
			t, path, generated, err := service.LoadTokens(cfg.Dir, given)
			if err != nil {
				bound.Close()
				return inputerr.Error{Err: err}
			}
			if generated {
				fmt.Fprintf(stderr, "dprl serve: generated tokens in %s (mode 0600)\n", path)
			}
			cfg.AdminToken, cfg.ClientToken, cfg.Registry = t.Admin, t.Client, newRegistry()
			cfg.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, "dprl serve: "+f+"\n", a...) }
			s, err := service.New(cfg)
			if err != nil {
				bound.Close()
				return inputerr.Error{Err: err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			err = service.Serve(ctx, s, bound, func(url string) {
				fmt.Fprintf(stdout, "dprl serve: listening on %s (data %s)\n", url, cfg.Dir)
			})
			cfg.Logf("stopped: requests drained, store closed")
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Dir, "data", "dprl-data", "data directory (the database, locked while served)")
	f.StringVar(&l.Addr, "addr", "127.0.0.1:8080", "listen address host:port (port 0: any free port)")
	f.StringVar(&l.CertFile, "tls-cert", "", "TLS certificate file (with --tls-key)")
	f.StringVar(&l.KeyFile, "tls-key", "", "TLS key file (with --tls-cert)")
	tokenFlags(cmd, &tok, &tokensFile, "the admin and client tokens")
	f.BoolVar(&cfg.Seeded, "seeded", false, "TEST MODE: experiments may name a seed and draw their noise from it (never for real users)")
	f.IntVar(&cfg.MaxExperiments, "max-experiments", 64, "most experiments held")
	f.IntVar(&cfg.MaxBatch, "max-batch", 512, "largest group commit (reports per fsync)")
	f.Int64Var(&cfg.MaxInflightBytes, "max-inflight-bytes", service.DefaultMaxInflightBytes, "most request-body bytes held at once over all requests (beyond: 503 with Retry-After)")
	f.IntVar(&cfg.SnapshotEvery, "snapshot-every", service.DefaultSnapshotEvery, "snapshot each experiment's state after this many acknowledged reports (-1: only by time and at shutdown); a restart replays only the reports after the last snapshot")
	f.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", service.DefaultSnapshotInterval, "snapshot each experiment with new reports at least this often (-1s: only by count and at shutdown)")
	f.BoolVar(&cfg.RetainReports, "retain-reports", false, "keep the raw reports a snapshot covers (audit); by default they are deleted with the snapshot (data minimisation)")
	f.StringVar(&storeURL, "store", "", "the store: empty for the embedded bbolt database in --data; postgres://USER@HOST:PORT/DB for a PostgreSQL database several servers share, one of them the leader (tokens then from --tokens-file or the environment, identical on every server)")
	f.StringVar(&advertise, "advertise", "", "with --store postgres://…: this server's URL as the other servers name it when it leads (default: the URL it listens on)")
	f.StringVar(&cpuProfile, "cpu-profile", "", "write the server's CPU profile (runtime/pprof) to this file when it stops (performance work)")
	cmd.AddCommand(newRotateKeyCmd(stdout), newBackupCmd(stdout))
	return cmd
}

// tokenFlags adds --tokens-file and the refused token flags (hidden: --admin-token and
// --client-token exist only to answer that tokens are never taken on a command line).
func tokenFlags(cmd *cobra.Command, tok *service.Tokens, file *string, what string) {
	f := cmd.Flags()
	f.StringVar(file, "tokens-file", "", what+": a JSON file {\"admin\": …, \"client\": …} of mode 0600 (default $DPRL_ADMIN_TOKEN, $DPRL_CLIENT_TOKEN)")
	f.StringVar(&tok.Admin, "admin-token", "", "refused: tokens never on the command line")
	f.StringVar(&tok.Client, "client-token", "", "refused: tokens never on the command line")
	f.MarkHidden("admin-token")
	f.MarkHidden("client-token")
}

// tokensFrom returns the tokens: --tokens-file if given, else the environment. A token flag is
// refused (exit 2), never used.
func tokensFrom(cmd *cobra.Command, file string) (service.Tokens, error) {
	for _, name := range []string{"admin-token", "client-token"} {
		if cmd.Flags().Changed(name) {
			return service.Tokens{}, inputerr.New("--%s: %w", name, service.ErrTokenOnCommandLine)
		}
	}
	if file != "" {
		t, err := service.ReadTokensFile(file)
		return t, inputerr.Wrap(err)
	}
	return service.TokensFromEnv(os.Getenv), nil
}

// newRotateKeyCmd is `dprl serve rotate-key --data DIR`: the offline rotation of the
// credential key (docs/serve.md, "Credentials and keys").
func newRotateKeyCmd(stdout io.Writer) *cobra.Command {
	var dir, storeURL string
	cmd := &cobra.Command{
		Use:   "rotate-key",
		Short: "Rotate the credential key of a stopped server's data directory (every credential minted before is refused; experiments, ledger and participation are kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if storeURL != "" {
				return rotateSharedKey(cmd, storeURL, stdout)
			}
			v, err := service.RotateKey(dir, time.Second)
			if err != nil {
				return inputerr.Wrap(err)
			}
			fmt.Fprintf(stdout, "dprl serve rotate-key: %s: credential key version %d; credentials minted before are refused from now on: mint new ones\n", dir, v)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "data", "dprl-data", "data directory of the stopped server (its lock is taken)")
	cmd.Flags().StringVar(&storeURL, "store", "", "a shared PostgreSQL database (postgres://…) instead of --data: every server on it stopped (the leadership is taken)")
	return cmd
}

// newBackupCmd is `dprl serve backup --data DIR --out FILE [--server URL]`: a consistent copy
// of the database, through the running server (it holds the lock) or from a stopped server's
// directory (docs/serve.md, "Backups").
func newBackupCmd(stdout io.Writer) *cobra.Command {
	var (
		o          service.BackupOptions
		tok        service.Tokens
		tokensFile string
	)
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Write a consistent copy of a data directory's database (through the running server with --server, else from the stopped server's directory)",
		Long: "Write a consistent copy of the database: one commit's state, checked, written atomically, never replacing a file unless --replace.\n" +
			"A running server holds the database's lock: back it up through it with --server URL (admin token from --tokens-file,\n" +
			"$DPRL_ADMIN_TOKEN or <data>/tokens.json). Restore: copy the file to <new data dir>/dprl.db with the same tokens.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Server != "" {
				t, err := tokensFrom(cmd, tokensFile)
				if err != nil {
					return err
				}
				if t.Admin == "" {
					if t, err = service.ReadTokens(o.Dir); err != nil {
						return inputerr.New("--data: %v (a backup through --server needs the admin token: --tokens-file, $DPRL_ADMIN_TOKEN or DIR/tokens.json)", err)
					}
				}
				o.AdminToken = t.Admin
			}
			n, err := service.Backup(cmd.Context(), o)
			if err != nil {
				var ce *client.Error
				if errors.As(err, &ce) && ce.Status >= 500 {
					return err
				}
				return inputerr.Wrap(err)
			}
			fmt.Fprintf(stdout, "dprl serve backup: %s: %d bytes (checked); restore: copy it to <new data dir>/%s\n", o.Out, n, "dprl.db")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "data", "dprl-data", "data directory (without --server: of a stopped server, whose lock is taken; with --server: where tokens.json is read)")
	f.StringVar(&o.Server, "server", "", "base URL of the running server holding the data directory (the backup goes through it: GET /v1/backup, admin token)")
	f.StringVar(&o.Out, "out", "", "the backup file (required; an existing file is refused unless --replace)")
	f.BoolVar(&o.Replace, "replace", false, "replace an existing --out file")
	tokenFlags(cmd, &tok, &tokensFile, "the admin token")
	return cmd
}

func newClientCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "client", Short: "Talk to a dprl serve server (simulate users)"}
	var (
		server, exp, out, env, envFile string
		dataDir                        string
		envParams                      []string
		req                            client.CreateRequest
		users, concurrency             int
		seed                           uint64
		tok                            service.Tokens
		tokensFile                     string
		cpuProfile                     string
	)
	sim := &cobra.Command{
		Use:   "simulate",
		Short: "Play simulated users against a served experiment (creating it with --family … when --experiment is not given)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			t, err := tokensFrom(cmd, tokensFile)
			if err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfile(&err)
			defer tuneGC(128 << 20)()
			if t.Admin == "" && t.Client == "" && dataDir != "" {
				if t, err = service.ReadTokens(dataDir); err != nil {
					return inputerr.New("--data: %v", err)
				}
			}
			if t.Admin == "" || t.Client == "" {
				return inputerr.New("tokens: simulating users needs the server's admin and client tokens: --data DIR (the server's data directory: DIR/tokens.json), --tokens-file FILE, or $DPRL_ADMIN_TOKEN and $DPRL_CLIENT_TOKEN")
			}
			params, err := parseEnvParams(envParams)
			if err != nil {
				return err
			}
			c := client.NewFailover(strings.Split(server, ","), t.Admin, t.Client, nil)
			ctx := cmd.Context()
			o := client.SimOptions{Experiment: exp, Registry: newRegistry(), Users: users, Concurrency: concurrency,
				Env: engine.EnvSpec{Name: env, File: envFile, Params: params}}
			// An LDP user's own guarantee: her noise is computed from it, the server's only
			// checked. Playing an existing experiment, only what the flags state (no default).
			if exp == "" || cmd.Flags().Changed("epsilon") {
				o.Epsilon = req.Epsilon
			}
			if exp == "" || cmd.Flags().Changed("delta") {
				o.Delta = req.Delta
			}
			if cmd.Flags().Changed("seed") {
				o.Seed = &seed
			}
			if exp == "" {
				req.Env = client.Env{Name: env, Params: params}
				if envFile != "" {
					if req.Env.Model, err = client.ReadModel(envFile); err != nil {
						return inputerr.New("--env-file: %v", err)
					}
				}
				req.Seed = o.Seed
				// The users are simulated: the experiment is a simulation (their regrets
				// go on its public curve). A non-private baseline only when asked for.
				req.Simulation = true
				if req.NonPrivate {
					if cmd.Flags().Changed("epsilon") || cmd.Flags().Changed("delta") {
						return inputerr.New("--non-private: a non-private experiment takes neither --epsilon nor --delta")
					}
					req.Epsilon, req.Delta = 0, 0
				}
				l, err := c.Create(ctx, req)
				if err != nil {
					return err
				}
				o.Experiment = l.Experiment
				fmt.Fprintf(stderr, "dprl client: created experiment %s (%s)\n", l.Experiment, l.Statement)
			}
			res, err := client.Simulate(ctx, c, o)
			if me := (*client.MismatchError)(nil); errors.As(err, &me) {
				return inputerr.Error{Err: err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, res.Summary(o.Experiment))
			if out != "" {
				return res.WriteCSV(out)
			}
			return nil
		},
	}
	f := sim.Flags()
	f.StringVar(&server, "server", "http://127.0.0.1:8080", "server base URL; the servers of a shared database (dprl serve --store postgres://…) as a comma-separated list: requests go to the leader, and follow it when it changes")
	f.StringVar(&exp, "experiment", "", "experiment ID (default: create one, as a simulation, from --family, --agent, … with the admin token); an experiment not created as a simulation is sent no regrets")
	f.StringVar(&env, "env", "", "the simulated users' environment (default: the experiment's)")
	f.StringVar(&envFile, "env-file", "", "model file for --env file")
	f.StringArrayVar(&envParams, "env-param", nil, "environment parameter NAME=NUMBER (repeatable)")
	f.StringVar(&req.Family, "family", "tabular", "family of the experiment to create")
	f.StringVar(&req.Agent, "agent", "practical-jdp", "agent of the experiment to create")
	f.Float64Var(&req.Epsilon, "epsilon", 1, "ε of the experiment to create (the agent's accountant must certify it); under LDP the users' own ε, from which they compute their noise (with --experiment: required for an LDP experiment unless --seed)")
	f.Float64Var(&req.Delta, "delta", 1e-5, "δ of the experiment to create; under LDP the users' own δ")
	f.BoolVar(&req.NonPrivate, "non-private", false, "create a non-private baseline (no --epsilon, --delta; labelled NON-PRIVATE)")
	f.IntVar(&req.Capacity, "capacity", 10000, "capacity K of the experiment to create")
	f.IntVar(&users, "users", 0, "users to play (default: the experiment's K)")
	f.IntVar(&concurrency, "concurrency", 1, "users playing at once (1: in order)")
	f.Uint64Var(&seed, "seed", 0, "TEST MODE: seeded users and LDP noise, as dprl run --seeds (needs dprl serve --seeded)")
	f.StringVar(&out, "out", "", "write each user's regret to this CSV file")
	tokenFlags(sim, &tok, &tokensFile, "the client token (and the admin token, to create and mint credentials)")
	f.StringVar(&dataDir, "data", "", "the server's data directory: read the tokens dprl serve generated there (tokens.json), when no token is given")
	f.StringVar(&cpuProfile, "cpu-profile", "", "write the simulator's CPU profile (runtime/pprof) to this file when it ends (performance work)")
	root.AddCommand(sim)
	return root
}

// startCPUProfile starts a CPU profile written to path (none if path is empty) and returns the
// function that stops it and closes the file, setting *err to the close's error if *err is
// nil. A file that cannot be created is bad input (exit 2).
func startCPUProfile(path string) (stop func(err *error), err error) {
	if path == "" {
		return func(*error) {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, inputerr.New("--cpu-profile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func(err *error) {
		pprof.StopCPUProfile()
		if cerr := f.Close(); *err == nil && cerr != nil {
			*err = fmt.Errorf("--cpu-profile: %w", cerr)
		}
	}, nil
}

// serveGCPercent is the garbage collector's target (GOGC) of dprl serve and dprl client
// simulate unless GOGC is set in the environment. Both keep a small live heap (a few MiB) and
// allocate per request, so at Go's default of 100 the collector ran many times a second: 13 %
// of the server's CPU under scripts/bench-serve.sh. At 400 the server takes 20 % less CPU and
// the simulator 7 % less.
//
// GOGC 400 alone lets the heap grow to five times what is live: 300 clients sending
// maximum-size batch bodies at once took dprl serve to 800–900 MiB of RSS (TestServeInflightRSS,
// 360 MiB at GOGC 100). So tuneGC also keeps the runtime's soft memory limit at
// 2 × the live heap + headroom (never above the --memory budget), re-read every
// gcRetune: a small heap gets GOGC 400's savings, a burst of bodies cannot pile up garbage
// beyond the headroom, and a large live heap (many big experiments) is never held below twice
// its size, so the collector cannot thrash.
const serveGCPercent = 400

// gcRetune is how often tuneGC re-reads the live heap.
const gcRetune = 250 * time.Millisecond

// tuneGC sets serveGCPercent and the adaptive soft memory limit (see serveGCPercent) unless
// the environment sets GOGC, and returns the function that restores both (the command ends;
// tests run commands in one process). headroom is the garbage a burst may leave above twice
// the live heap: the bytes of bodies in flight it allows, plus a margin.
func tuneGC(headroom int64) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(serveGCPercent)
	budget := debug.SetMemoryLimit(-1)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	retune := func() {
		metrics.Read(sample)
		limit := budget
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live := int64(sample[0].Value.Uint64())
			if l := 2*live + headroom; l < limit {
				limit = l
			}
		}
		debug.SetMemoryLimit(limit)
	}
	retune()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(gcRetune)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				retune()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		debug.SetGCPercent(old)
		debug.SetMemoryLimit(budget)
	}
}
