package schemaregistry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// Serve answers the API on ln until ctx ends, then lets requests in
// flight finish (up to 10s) and returns.
func (r *Registry) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           r.Handler(),
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
