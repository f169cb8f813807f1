// Command floor is the floor server of scripts/bench-serve.sh (package internal/benchfloor):
// reports are authenticated, appended in bbolt group commits with fsync and acknowledged after
// the commit; every other request goes to the dprl serve at --backend. The client token comes
// from $DPRL_CLIENT_TOKEN. It prints "listening on URL" and stops on SIGTERM or SIGINT.
//
//	go run ./scripts/floor --data DIR --backend http://127.0.0.1:8080 --addr 127.0.0.1:0
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/dprl/dprl/internal/benchfloor"
)

func main() {
	dir := flag.String("data", "floor-data", "data directory (floor.db)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	backend := flag.String("backend", "", "base URL of the dprl serve that answers every request but reports")
	maxBatch := flag.Int("max-batch", 512, "largest group commit")
	flag.Parse()
	if err := run(*dir, *addr, *backend, *maxBatch); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
}

func run(dir, addr, backend string, maxBatch int) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as dprl serve
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	s, err := benchfloor.New(benchfloor.Config{Dir: dir, ClientToken: os.Getenv("DPRL_CLIENT_TOKEN"), Backend: backend, MaxBatch: maxBatch})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return err
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	fmt.Printf("floor: listening on http://%s (data %s, backend %s)\n", ln.Addr(), dir, backend)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}
