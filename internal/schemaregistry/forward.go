package schemaregistry

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// forwardedHeader marks a request one instance forwarded to another: it
// is never forwarded again, so instances whose views of the election
// differ for a moment answer an error instead of passing a request around.
const forwardedHeader = "X-Samsa-Registry-Forwarded"

// newForwardTransport is the transport of forwarded requests: the
// primary's https URL is checked against cfg (nil: the system's CAs).
func newForwardTransport(cfg *tls.Config) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if cfg != nil {
		t.TLSClientConfig = cfg.Clone()
	}
	return t
}

// forwarding wraps a write endpoint: on an instance that is not the
// primary the request goes to the primary as it came, and the primary's
// answer comes back as it is, as Confluent's secondaries forward.
func (r *Registry) forwarding(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		primary, e := r.primary()
		if e != nil {
			writeError(w, e)
			return
		}
		if primary == "" || req.Header.Get(forwardedHeader) != "" {
			h(w, req) // writeOp refuses a forwarded request if this is not the primary
			return
		}
		target, err := url.Parse(primary)
		if err != nil {
			writeError(w, errForwarding(err))
			return
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.Transport = r.forwardTransport
		// The caller's Authorization header goes along as it came: the
		// primary authenticates the caller, not this instance.
		proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) { writeError(w, errForwarding(err)) }
		// Read your writes on any instance: the primary answered once its
		// own reader applied the write; this instance answers once its
		// reader has read as far, so a read sent here next sees the write
		// (without it a GET of the version just registered could be 404
		// here for a moment; seen with Apache Kafka as the store).
		proxy.ModifyResponse = func(resp *http.Response) error {
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				return nil
			}
			ctx, cancel := context.WithTimeout(resp.Request.Context(), r.cfg.Timeout)
			defer cancel()
			if err := r.store.catchUp(ctx); err != nil {
				// The write is done: answer it, stale reads here or not.
				r.log.Warn("after a forwarded write, this instance could not read the store to its end", "component", "schemaregistry", "err", err)
			}
			return nil
		}
		req.Header.Set(forwardedHeader, r.cfg.URL)
		proxy.ServeHTTP(w, req)
	}
}
