package broker

// The broker's HTTP listener (samsa.http.listener, 127.0.0.1:9644 unless
// configured; empty turns it off) serves what an operator's tools poll:
//
//	GET /metrics  the broker's metrics in Prometheus' text format (metrics.go)
//	GET /healthz  200 while the process serves HTTP at all
//	GET /readyz   200 once Start has brought the broker up; 503 with a
//	              one-line reason before that (a quorum not formed yet, a
//	              broker not yet unfenced), while it shuts down, and
//	              whenever it cannot serve all it should: its metadata
//	              more than maxMetadataLag entries behind the committed
//	              log, or a partition it leads in that metadata not open,
//	              not yet led here, or (an internal topic's) not loaded by
//	              its coordinator
//	GET /v1/balancer  the automatic balancer's state as JSON (balancer.go)
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

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/txn"
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
	mux.HandleFunc("GET /v1/balancer", b.serveBalancer)
	mux.HandleFunc("GET /v1/share-partitions", b.serveSharePartitions)
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
// does. Until Start returns it reads only channels and atomics: it runs
// on HTTP goroutines while Start fills in the broker.
func (b *Broker) notReady() string {
	if b.shuttingDown.Load() {
		return "shutting down"
	}
	select {
	case <-b.started:
		return b.notServing()
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

// maxMetadataLag is how far, in metadata log entries, what the broker has
// applied may trail what the quorum committed before /readyz says so: a
// burst of metadata writes passes in a moment; a broker stuck behind does
// not.
const maxMetadataLag = 20

// notServing says why a started broker cannot serve all it should, ""
// when it can: its metadata trails the committed log, or a partition it
// leads in the metadata it applied is not served here (the first of them
// is named, with how many more).
func (b *Broker) notServing() string {
	img := b.meta.Load()
	if img == nil {
		return "no metadata applied"
	}
	if lag := b.metadataLag(img); lag > maxMetadataLag {
		return fmt.Sprintf("the metadata applied here is %d entries behind the committed metadata log (more than %d)", lag, maxMetadataLag)
	}
	first, more := "", 0
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if int32(p.Leader) != b.cfg.NodeID {
				continue
			}
			if why := b.ledNotServed(t, p); why != "" {
				if first == "" {
					first = why
				} else {
					more++
				}
			}
		}
	}
	if more > 0 {
		first += fmt.Sprintf(" (and %d more partitions)", more)
	}
	return first
}

// metadataLag is how many entries of the metadata log this node knows are
// committed and the broker has not applied: those Raft has not applied to
// the controller's image, and those in that image the broker has not
// applied yet (applyImage runs behind it, opening logs).
func (b *Broker) metadataLag(applied *metadata.Image) int64 {
	return b.ctrl.CommitLag() + max(b.ctrl.Image().Offset()-applied.Offset(), 0)
}

// ledNotServed says why a partition the applied metadata has this broker
// lead is not served here, "" when it is.
func (b *Broker) ledNotServed(t *metadata.TopicImage, p metadata.PartitionImage) string {
	name := fmt.Sprintf("%s-%d", t.Name, p.Partition)
	ts, ok := b.topics.byTopicID(t.ID)
	if !ok || int(p.Partition) >= len(ts.partitions) || ts.partitions[p.Partition] == nil {
		return "partition " + name + ", led here, has no open log"
	}
	rp := ts.partitions[p.Partition]
	if !rp.IsLeader() || rp.LeaderEpoch() != p.LeaderEpoch {
		return fmt.Sprintf("partition %s is not led here yet (leader epoch %d)", name, p.LeaderEpoch)
	}
	var code int16
	switch t.Name {
	case group.OffsetsTopic:
		code = b.groups.PartitionCode(p.Partition)
	case txn.StateTopic:
		code = b.txns.PartitionCode(p.Partition)
	default:
		return ""
	}
	switch code {
	case 0:
		return ""
	case kerr.CoordinatorLoadInProgress.Code:
		return "the coordinator is loading partition " + name
	}
	return "the coordinator does not serve partition " + name + ": " + kerr.ErrorForCode(code).Error()
}
