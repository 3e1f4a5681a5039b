package schemaregistry

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// Serve answers the API on ln until ctx ends, then lets requests in
// flight finish (up to 10s) and returns.
// With Config.TLS the listener speaks TLS.
func (r *Registry) Serve(ctx context.Context, ln net.Listener) error {
	return serveHTTP(ctx, withTLS(ln, r.cfg.TLS), r.Handler())
}

func withTLS(ln net.Listener, cfg *tls.Config) net.Listener {
	if cfg == nil {
		return ln
	}
	return tls.NewListener(ln, cfg)
}

func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
	}
	g := task.NewGroup(ctx)
	g.Go(func(ctx context.Context) {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut) // a request still running after 10s is cut off by Close below
		srv.Close()
	})
	err := srv.Serve(ln)
	g.Stop()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// RunOptions tune Run.
type RunOptions struct {
	// Retry is the pause after a failed start before the next one; 2s
	// when zero.
	Retry time.Duration
	// StartTimeout bounds one start (creating and reading the store,
	// electing a primary); 60s when zero.
	StartTimeout time.Duration
	// Ready is called with the registry once it answers (nil: nothing);
	// the registry is closed when Run returns.
	Ready func(*Registry)
}

// Run serves a registry on ln until ctx ends, as a long-lived service does
// (samsa serve): the listener is answered at once, with 50001 "not ready"
// until the store has been read, and a start that fails is retried rather
// than given up. A cluster that is still forming (fewer brokers than the
// store topic's replication factor, no quorum yet) is the common cause,
// and it passes by itself. A one-shot command (samsa registry) uses New,
// Start and Serve instead, and fails fast.
func Run(ctx context.Context, ln net.Listener, cfg Config, opts RunOptions) error {
	if opts.Retry <= 0 {
		opts.Retry = 2 * time.Second
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	var live atomic.Pointer[http.Handler]
	starting := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if h := live.Load(); h != nil {
			(*h).ServeHTTP(w, req) // its own Auth runs again: cheap, and cached for Kafka logins
			return
		}
		writeError(w, &Error{http.StatusServiceUnavailable, codeStore, "Schema Registry is starting: its store has not been read yet"})
	})
	// A listener that fails ends the start-up retries too.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := task.NewGroup(runCtx)
	serveErr := make(chan error, 1)
	g.Go(func(ctx context.Context) {
		serveErr <- serveHTTP(ctx, withTLS(ln, cfg.TLS), withAuth(cfg.Auth, starting))
		cancel()
	})
	reg := startRetrying(runCtx, cfg, opts)
	if reg != nil {
		h := reg.Handler()
		live.Store(&h)
		if opts.Ready != nil {
			opts.Ready(reg)
		}
	}
	var err error
	select {
	case <-runCtx.Done():
	case err = <-serveErr:
	}
	cancel()
	g.Stop()
	if err == nil {
		select {
		case err = <-serveErr:
		default:
		}
	}
	if reg != nil {
		reg.Close()
	}
	return err
}

// startRetrying starts a registry, retrying until one starts or ctx ends
// (nil then).
func startRetrying(ctx context.Context, cfg Config, opts RunOptions) *Registry {
	for {
		reg, err := New(cfg)
		if err == nil {
			startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
			err = reg.Start(startCtx)
			cancel()
			if err == nil {
				return reg
			}
			reg.Close()
		}
		if ctx.Err() != nil {
			return nil
		}
		log := cfg.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("schema registry start failed; retrying", "component", "schemaregistry", "err", err, "retry", opts.Retry)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.Retry):
		}
	}
}
