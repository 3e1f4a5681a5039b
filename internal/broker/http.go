package broker

// The broker's HTTP listener (samsa.http.listener, 127.0.0.1:9644 unless
// configured; empty turns it off) serves what an operator's tools poll:
//
//	GET /metrics  the broker's metrics in Prometheus' text format (metrics.go)
//	GET /healthz  200 while the process serves HTTP at all
//	GET /readyz   200 once Start has brought the broker up; 503 with a
//	              one-line reason before that (a quorum not formed yet, a
//	              broker not yet unfenced) and while it shuts down
//
// It is bound in New, so a port in use refuses the broker before it serves
// anything, and it serves from the first moment of Start, so /readyz can
// say what a start that waits (for a quorum) waits for.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// bindHTTP binds the HTTP listener when one is configured.
func (b *Broker) bindHTTP() error {
	if b.cfg.HTTPListener == "" {
		return nil
	}
	ln, err := net.Listen("tcp", b.cfg.HTTPListener)
	if err != nil {
		return fmt.Errorf("broker: samsa.http.listener %s: %w", b.cfg.HTTPListener, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", b.metricsHandler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", b.serveReadyz)
	srv := &http.Server{
		Handler: mux,
		// A scraper that connects and says nothing must not hold a
		// connection (and its goroutine) for ever.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelDebug),
	}
	b.mu.Lock()
	b.mu.httpLn, b.mu.httpSrv = ln, srv
	b.mu.Unlock()
	return nil
}

// serveHTTP serves the listener bindHTTP bound until the broker closes it
// (closeListeners).
func (b *Broker) serveHTTP() {
	b.mu.Lock()
	ln, srv := b.mu.httpLn, b.mu.httpSrv
	b.mu.Unlock()
	if ln == nil {
		return
	}
	b.tasks.Go(func(context.Context) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.log.Error("HTTP listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	})
}

// closeHTTPLocked closes the HTTP listener and its connections. The caller
// holds b.mu.
func (b *Broker) closeHTTPLocked() {
	if b.mu.httpSrv != nil {
		b.mu.httpSrv.Close()
	}
	if b.mu.httpLn != nil {
		// Closed here too: Server.Close knows only the listeners Serve
		// was given, and a broker closed before Start never gave it one.
		b.mu.httpLn.Close()
	}
}

// HTTPAddr is the host:port the HTTP listener is bound to (the port
// resolved when 0 was asked), "" when it is off.
func (b *Broker) HTTPAddr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.httpLn == nil {
		return ""
	}
	a := b.mu.httpLn.Addr().(*net.TCPAddr)
	return net.JoinHostPort(a.IP.String(), strconv.Itoa(a.Port))
}

func (b *Broker) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if reason := b.notReady(); reason != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: "+reason+"\n")
		return
	}
	io.WriteString(w, "ready\n")
}

// notReady says why the broker does not serve clients yet, "" once it
// does. It reads only channels and atomics: it runs on HTTP goroutines
// while Start fills in the broker.
func (b *Broker) notReady() string {
	if b.shuttingDown.Load() {
		return "shutting down"
	}
	select {
	case <-b.started:
		return ""
	default:
	}
	q := b.cfg.quorum
	select {
	case <-b.ctrlReady:
		if q.cluster() && q.broker {
			return "waiting for the active controller to register and unfence this broker, and for its metadata to catch up"
		}
		return "loading the metadata, partitions and coordinators"
	default:
	}
	switch {
	case q.observer():
		return "starting to follow the metadata quorum"
	case len(q.voters) > 0:
		return "waiting for the controller quorum to elect a leader (" + strconv.Itoa(len(q.voters)) + " voters)"
	case q.cluster():
		return "waiting for the controller quorum to elect a leader (controller.quorum.bootstrap.servers " + strings.Join(q.bootstrap, ",") + ")"
	}
	return "opening the metadata log"
}
