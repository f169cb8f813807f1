package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/store/pgstore"
)

// checkStoreURL checks --store and that the tokens were given (a shared database's servers
// must all hold the same tokens: none is generated).
func checkStoreURL(url string, given service.Tokens) error {
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return inputerr.New("--store: a PostgreSQL URL postgres://USER@HOST:PORT/DB, or nothing for the embedded database in --data; got %q", pgstore.Redact(url))
	}
	if given.Admin == "" || given.Client == "" {
		return inputerr.New("--store: the servers of a shared database must hold the same tokens: give them with --tokens-file or $DPRL_ADMIN_TOKEN and $DPRL_CLIENT_TOKEN (none is generated)")
	}
	return nil
}

// serveShared runs `dprl serve --store postgres://…`: a standby until it takes the
// leadership, then the leader (service.ServeElected).
func serveShared(cmd *cobra.Command, cfg service.Config, bound *service.Bound, url, advertise string, stdout io.Writer) error {
	if advertise == "" {
		advertise = bound.URL()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	db, err := pgstore.Open(ctx, url, pgstore.Options{Name: advertise, Logf: cfg.Logf})
	if err != nil {
		bound.Close()
		return inputerr.Error{Err: err}
	}
	defer db.Close()
	err = service.ServeElected(ctx, cfg, pgElector{db}, bound, func(u string) {
		fmt.Fprintf(stdout, "dprl serve: listening on %s (store %s; a standby until it leads)\n", u, pgstore.Redact(url))
	})
	cfg.Logf("stopped: requests drained, leadership released")
	return err
}

// pgElector is the PostgreSQL leader election as the service sees it.
type pgElector struct{ db *pgstore.DB }

func (e pgElector) TryLead(ctx context.Context) (service.Leadership, error) {
	s, err := e.db.TryLead(ctx)
	if s == nil {
		return nil, err
	}
	return s, nil
}

func (e pgElector) Leader(ctx context.Context) (string, error) {
	name, epoch, held, err := e.db.Leader(ctx)
	switch {
	case err != nil:
		return "", err
	case held:
		return fmt.Sprintf("%s (epoch %d)", name, epoch), nil
	case epoch == 0:
		return "none yet (a server takes the leadership within a second)", nil
	default:
		return fmt.Sprintf("none right now (the last, %s of epoch %d, is gone; a standby takes over within a second)", name, epoch), nil
	}
}

// rotateSharedKey is `dprl serve rotate-key --store URL`: it takes the leadership (so no
// server may run on the database) and rotates the credential key.
func rotateSharedKey(cmd *cobra.Command, url string, stdout io.Writer) error {
	if err := checkStoreURL(url, service.Tokens{Admin: "-", Client: "-"}); err != nil {
		return err
	}
	db, err := pgstore.Open(cmd.Context(), url, pgstore.Options{Name: "dprl serve rotate-key"})
	if err != nil {
		return inputerr.Error{Err: err}
	}
	defer db.Close()
	s, err := db.TryLead(cmd.Context())
	if err != nil {
		return inputerr.Error{Err: err}
	}
	if s == nil {
		return inputerr.Error{Err: errors.New("--store: a server leads this database: stop every server on it before rotating the key")}
	}
	defer s.Close()
	ck, err := s.RotateCredentialKey()
	if err != nil {
		return inputerr.Wrap(err)
	}
	fmt.Fprintf(stdout, "dprl serve rotate-key: %s: credential key version %d; credentials minted before are refused from now on: mint new ones\n", pgstore.Redact(url), ck.Version)
	return nil
}
