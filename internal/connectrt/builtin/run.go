package builtin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt"
	"github.com/samsa-io/samsa/internal/connectrt/rest"
	"github.com/samsa-io/samsa/internal/task"
)

// Options start a worker with its REST API.
type Options struct {
	Config     connectrt.WorkerConfig
	ClientOpts []kgo.Opt // seed brokers and security
	Extra      []connect.Plugin
	Logger     *slog.Logger
	Levels     *rest.LevelVars
	Version    string
	// Listener, when set, is the REST listener to serve on (tests and
	// serve bind it first); otherwise Config's first listener is bound.
	Listener net.Listener
}

// Running is a started worker.
type Running struct {
	Worker  *connectrt.Worker
	URL     string
	srv     *http.Server
	ln      net.Listener
	done    chan error
	serving *task.Group
}

// Start binds the REST listener, starts the worker and serves its API.
func Start(ctx context.Context, o Options) (*Running, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Levels == nil {
		o.Levels = rest.NewLevelVars(slog.LevelInfo)
	}
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", o.Config.ListenAddr()); err != nil {
			return nil, fmt.Errorf("connect listener %s: %w", o.Config.Listeners[0], err)
		}
	}
	url := o.Config.AdvertisedURL
	if url == "" {
		url = advertised(ln.Addr())
	}
	opts := connectrt.Options{Config: o.Config, Plugins: Plugins(o.Extra...), ClientOpts: o.ClientOpts,
		Logger: o.Logger, URL: url, Version: o.Version}
	if o.Config.Distributed {
		opts.Membership = Membership(o.Config, url, o.Logger.With("component", "connect-group"))
	}
	w, err := connectrt.New(opts)
	if err != nil {
		ln.Close()
		return nil, err
	}
	api, err := rest.New(rest.Config{Herder: w, Loggers: o.Levels, Logger: o.Logger,
		TopicTrackingDisabled: !o.Config.TopicTracking, TopicTrackingResetDisabled: !o.Config.TopicTrackingReset})
	if err != nil {
		ln.Close()
		return nil, err
	}
	r := &Running{Worker: w, URL: url, ln: ln, done: make(chan error, 1),
		srv: &http.Server{Handler: api, ReadHeaderTimeout: 30 * time.Second}}
	// The API answers while the worker starts: /health says 503 until it is ready.
	r.serving = task.NewGroup(context.WithoutCancel(ctx))
	r.serving.Go(func(context.Context) { r.done <- r.srv.Serve(ln) })
	if err := w.Start(ctx); err != nil {
		r.srv.Close()
		w.Stop()
		return nil, err
	}
	return r, nil
}

// advertised is the URL other workers reach a bound address at: loopback
// when the listener took every interface.
func advertised(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

// Stop stops serving, then the worker (its tasks commit and leave).
func (r *Running) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	r.Worker.Stop()
	r.serving.Stop()
	if err := <-r.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		slog.Default().Warn("connect rest server", "err", err)
	}
}
