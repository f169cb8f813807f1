package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		cfg service.Config
		l   service.Listen
		tok service.Tokens
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve private agents to real users over HTTP (docs/serve.md)",
		Long: "Serve the curator side of dprl's agents behind an HTTP/JSON API with a durable embedded store.\n" +
			"Tokens come from --admin-token/--client-token or DPRL_ADMIN_TOKEN/DPRL_CLIENT_TOKEN, else they are\n" +
			"generated once into <data>/tokens.json. SIGTERM or SIGINT drains: requests in flight are committed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.MaxInflightBytes <= 0 {
				return inputerr.New("--max-inflight-bytes: a positive number of bytes, got %d", cfg.MaxInflightBytes)
			}
			t, path, generated, err := service.LoadTokens(cfg.Dir, tokensFrom(tok))
			if err != nil {
				return inputerr.Error{Err: err}
			}
			if generated {
				fmt.Fprintf(stderr, "dprl serve: generated tokens in %s (mode 0600)\n", path)
			}
			cfg.AdminToken, cfg.ClientToken, cfg.Registry = t.Admin, t.Client, newRegistry()
			cfg.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, "dprl serve: "+f+"\n", a...) }
			s, err := service.New(cfg)
			if err != nil {
				return inputerr.Error{Err: err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			err = service.ListenAndServe(ctx, s, l, func(url string) {
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
	f.StringVar(&tok.Admin, "admin-token", "", "admin token (default $DPRL_ADMIN_TOKEN)")
	f.StringVar(&tok.Client, "client-token", "", "client token (default $DPRL_CLIENT_TOKEN)")
	f.BoolVar(&cfg.Seeded, "seeded", false, "TEST MODE: experiments may name a seed and draw their noise from it (never for real users)")
	f.IntVar(&cfg.MaxExperiments, "max-experiments", 64, "most experiments held")
	f.IntVar(&cfg.MaxBatch, "max-batch", 512, "largest group commit (reports per fsync)")
	f.Int64Var(&cfg.MaxInflightBytes, "max-inflight-bytes", service.DefaultMaxInflightBytes, "most request-body bytes held at once over all requests (beyond: 503 with Retry-After)")
	return cmd
}

func tokensFrom(t service.Tokens) service.Tokens {
	if t.Admin == "" {
		t.Admin = os.Getenv("DPRL_ADMIN_TOKEN")
	}
	if t.Client == "" {
		t.Client = os.Getenv("DPRL_CLIENT_TOKEN")
	}
	return t
}

func newClientCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "client", Short: "Talk to a dprl serve server (simulate users)"}
	var (
		server, exp, out, env, envFile string
		envParams                      []string
		req                            client.CreateRequest
		users, concurrency             int
		seed                           uint64
		tok                            service.Tokens
	)
	sim := &cobra.Command{
		Use:   "simulate",
		Short: "Play simulated users against a served experiment (creating it with --family … when --experiment is not given)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t := tokensFrom(tok)
			params, err := parseEnvParams(envParams)
			if err != nil {
				return err
			}
			c := client.New(server, t.Admin, t.Client, nil)
			ctx := cmd.Context()
			o := client.SimOptions{Experiment: exp, Registry: newRegistry(), Users: users, Concurrency: concurrency,
				Env: engine.EnvSpec{Name: env, File: envFile, Params: params}}
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
				l, err := c.Create(ctx, req)
				if err != nil {
					return err
				}
				o.Experiment = l.Experiment
				fmt.Fprintf(stderr, "dprl client: created experiment %s (%s)\n", l.Experiment, l.Statement)
			}
			res, err := client.Simulate(ctx, c, o)
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
	f.StringVar(&server, "server", "http://127.0.0.1:8080", "server base URL")
	f.StringVar(&exp, "experiment", "", "experiment ID (default: create one from --family, --agent, … with the admin token)")
	f.StringVar(&env, "env", "", "the simulated users' environment (default: the experiment's)")
	f.StringVar(&envFile, "env-file", "", "model file for --env file")
	f.StringArrayVar(&envParams, "env-param", nil, "environment parameter NAME=NUMBER (repeatable)")
	f.StringVar(&req.Family, "family", "tabular", "family of the experiment to create")
	f.StringVar(&req.Agent, "agent", "practical-jdp", "agent of the experiment to create")
	f.Float64Var(&req.Epsilon, "epsilon", 1, "ε of the experiment to create (0 for a non-private agent)")
	f.Float64Var(&req.Delta, "delta", 1e-5, "δ of the experiment to create")
	f.IntVar(&req.Capacity, "capacity", 10000, "capacity K of the experiment to create")
	f.IntVar(&users, "users", 0, "users to play (default: the experiment's K)")
	f.IntVar(&concurrency, "concurrency", 1, "users playing at once (1: in order)")
	f.Uint64Var(&seed, "seed", 0, "TEST MODE: seeded users and LDP noise, as dprl run --seeds (needs dprl serve --seeded)")
	f.StringVar(&out, "out", "", "write each user's regret to this CSV file")
	f.StringVar(&tok.Admin, "admin-token", "", "admin token (default $DPRL_ADMIN_TOKEN; to create and mint credentials)")
	f.StringVar(&tok.Client, "client-token", "", "client token (default $DPRL_CLIENT_TOKEN)")
	root.AddCommand(sim)
	return root
}
