package broker

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/vfs"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxQueuedResponses bounds the responses a connection holds while its
// writer is busy; past it the reader stops reading, so a client that does
// not read its responses cannot make the broker buffer without limit.
const maxQueuedResponses = 32

// conn is one client connection.
type conn struct {
	b        *Broker
	nc       net.Conn
	id       uint64
	listener string
	// controllerListener: the connection came in on a listener that
	// carries the quorum (quorumSettings.servesQuorum), where Raft and the
	// controller-only APIs are served and nothing is forwarded.
	controllerListener bool
	// raftListener: a broker-only node's inter-broker listener, which
	// also takes the active controller's Raft connections.
	raftListener bool
	log          *slog.Logger
	out          chan *frame
	closing      atomic.Bool

	// Set by ApiVersions v3+ (KIP-511), for logs, metrics and client
	// metrics subscriptions (telemetry.go): "name/version", and each part.
	clientSoftware                string
	softwareName, softwareVersion string
	// clientID is the client ID of the request being handled.
	clientID string

	// sec is the listener's security (security.go); nil on PLAINTEXT.
	sec *listenerSecurity
	// principal is who the connection authenticated as: from its client
	// certificate on SSL, its SASL exchange on SASL_*, else ANONYMOUS.
	principal auth.Principal
	// sasl is the SASL state on a SASL_* listener, else nil.
	sasl *saslConn
	// readyGate, when not nil, is what the connection's requests other
	// than the SASL exchange wait for (serve).
	readyGate <-chan struct{}
	// authz is the client's address as ACLs name it and the current
	// request's authorization audit (authz.go).
	authz connAuthz

	// The request being handled, for its quotas (quotas.go): its API,
	// when its handling began (the start its metrics time too), its size, whether it is a follower's
	// fetch; the throttle time its quotas ask, and whether its response
	// tells the client to wait it out itself (KIP-219) or the broker
	// holds the response back instead.
	api          apiEntry
	reqStart     time.Time
	reqSize      int
	replicaFetch bool
	throttle     time.Duration
	clientWaits  bool
	// census is what the connection is counted under in the census of
	// connections by principal and client software (metrics_runtime.go).
	census struct {
		counted   bool
		principal auth.Principal
		software  clientSoftware
	}

	// purgatory is how long the request being handled waited for
	// followers (acks=all) or for data (a long poll), which its
	// handler's busy time leaves out (metrics_runtime.go).
	purgatory time.Duration
}

// frame is an encoded response ready to write. Record data fetched from
// segments is not in buf: each hole names a file range to send at a
// position of buf, so the bytes go from page cache to socket without being
// copied through the broker (sendfile).
type frame struct {
	buf   []byte
	holes []hole
	// delay holds the response back: a throttled response of a version
	// whose client does not wait out throttle_time_ms itself.
	delay time.Duration
	// closeAfter closes the connection once the frame is written: a
	// refused SASL handshake or a failed authentication is answered, then
	// the connection ends, as in Kafka.
	closeAfter bool
	// req is the request answered, timed once the frame is sent (metrics.go).
	req requestMark
}

type hole struct {
	at int // position in buf before which the range is sent
	rr storage.ReadResult
}

func (f *frame) release() {
	for i := range f.holes {
		f.holes[i].rr.Release()
	}
}

// serve runs the connection until the client leaves, a protocol error
// closes it, or the broker shuts down.
func (c *conn) serve(ctx context.Context) {
	if err := c.secure(ctx); err != nil {
		c.log.Info("connection refused", "err", err)
		c.nc.Close()
		return
	}
	c.joinCensus()
	defer c.leaveCensus()
	var first io.Reader
	if c.controllerListener || c.raftListener {
		raft, r, err := c.serveControllerConn()
		if raft {
			return // Raft owns the connection now
		}
		if err != nil {
			c.nc.Close()
			return
		}
		first = r
		// A controller listener's Kafka requests wait for the controller;
		// a broker-only node's Raft listener is its broker listener too,
		// opened early for Raft, and its requests wait for the broker.
		ready := c.b.ctrlReady
		if c.raftListener {
			ready = c.b.started
		}
		if c.sasl != nil {
			// Raft logs in before it speaks, and the quorum it builds is
			// what the controller waits for: the SASL exchange is served
			// at once, the rest waits (handle).
			c.readyGate = ready
		} else {
			select {
			case <-ready:
			case <-ctx.Done():
				c.nc.Close()
				return
			}
		}
	}
	c.out = make(chan *frame, maxQueuedResponses)
	writerDone := make(chan struct{})
	c.b.tasks.Go(func(context.Context) {
		defer close(writerDone)
		c.writeLoop()
	})
	stop := context.AfterFunc(ctx, c.interrupt)
	defer stop()
	err := c.readLoop(first)
	close(c.out)
	<-writerDone
	if errors.Is(err, errHandedOver) {
		return // Raft owns the connection now
	}
	c.nc.Close()
	c.b.closeShareSessions(c.id)
	if err != nil && !errors.Is(err, io.EOF) && !c.closing.Load() {
		c.log.Info("connection closed", "err", err)
	}
}

// interrupt makes a blocked read return so the connection drains and
// closes; a request being handled finishes first.
func (c *conn) interrupt() {
	c.closing.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

// readLoop reads requests; first, when not nil, holds bytes already read
// from the connection.
func (c *conn) readLoop(first io.Reader) error {
	var src io.Reader = c.nc
	if first != nil {
		src = io.MultiReader(first, c.nc)
	}
	br := bufio.NewReaderSize(src, 64<<10)
	var sizeBuf [4]byte
	for {
		if c.closing.Load() {
			return nil
		}
		c.nc.SetReadDeadline(time.Now().Add(c.b.cfg.ConnectionsMaxIdle))
		if _, err := io.ReadFull(br, sizeBuf[:]); err != nil {
			return c.readErr(err)
		}
		if sizeBuf == controller.RaftPreamble && c.raftAfterLogin() {
			if !c.raftAuthorized() {
				return errRaftDenied(c)
			}
			return c.handOverRaft(br)
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		if size < 0 || size > c.b.cfg.SocketRequestMaxBytes {
			// Checked before allocating: a lying size must not cost memory.
			return fmt.Errorf("frame of %d bytes, socket.request.max.bytes is %d", size, c.b.cfg.SocketRequestMaxBytes)
		}
		if c.sasl != nil {
			if limit := c.sasl.maxReceive(); limit > 0 && size > limit {
				return fmt.Errorf("frame of %d bytes before SASL authentication completed, sasl.server.max.receive.size is %d", size, limit)
			}
		}
		buf := requestBuffer(int(size))
		if _, err := io.ReadFull(br, buf); err != nil {
			return c.readErr(err)
		}
		f, err := c.dispatch(buf)
		recycleRequest(buf)
		if err != nil {
			return err
		}
		throttle := c.throttle
		if throttle > 0 {
			c.b.metrics.rt.requestThrottled(c.api.key)
		}
		if f != nil {
			if throttle > 0 && !c.clientWaits {
				f.delay = throttle
			}
			c.out <- f
			if f.closeAfter {
				return nil
			}
		}
		// A throttled client's next request waits: the connection is
		// muted for the throttle time, as Kafka mutes the channel.
		c.b.pause(c.b.tasks.Context(), throttle)
	}
}

// raftAfterLogin reports whether a connection may turn into a Raft
// connection now: on a SASL listener that carries Raft (a controller
// listener, a broker-only node's inter-broker listener), once the peer has
// logged in. dialRaft's SASL login is followed by the preamble.
func (c *conn) raftAfterLogin() bool {
	return (c.controllerListener || c.raftListener) && c.sasl != nil && c.sasl.stage == saslDone
}

// raftAuthorized reports whether the connection's principal may carry
// Raft: CLUSTER_ACTION on the cluster, what Kafka asks of the KRaft APIs
// (Vote, BeginQuorumEpoch, EndQuorumEpoch, a voter's Fetch) that Samsa's
// Raft stands for. A denial is audited and counted under Vote.
func (c *conn) raftAuthorized() bool {
	c.beginAudit(kmsg.Vote)
	ok := c.b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	c.b.endAudit(c)
	return ok
}

// errRaftDenied is why a connection that asked for Raft without
// raftAuthorized is closed.
func errRaftDenied(c *conn) error {
	return fmt.Errorf("Raft connection refused: %s may not CLUSTER_ACTION on the cluster", c.principal)
}

// errHandedOver ends the read loop of a connection given to Raft.
var errHandedOver = errors.New("broker: connection handed to Raft")

// handOverRaft gives the connection, with what the reader has buffered
// past the preamble, to the controller's Raft transport.
func (c *conn) handOverRaft(br *bufio.Reader) error {
	c.nc.SetReadDeadline(time.Time{})
	c.b.ctrl.ServeRaft(&bufferedConn{Conn: c.nc, r: br})
	return errHandedOver
}

// bufferedConn reads first what a bufio.Reader took from the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// dispatch handles one frame: a request, or a bare SASL token after a
// SaslHandshake v0.
func (c *conn) dispatch(buf []byte) (*frame, error) {
	if c.sasl != nil && c.sasl.stage == saslRawToken {
		return c.saslRawToken(buf)
	}
	return c.b.handle(c, buf)
}

func (c *conn) readErr(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if c.closing.Load() {
			return nil
		}
		return fmt.Errorf("idle for connections.max.idle.ms (%v)", c.b.cfg.ConnectionsMaxIdle)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return io.EOF
	}
	return err
}

func (c *conn) writeLoop() {
	var failed error
	for f := range c.out {
		if failed == nil && f.delay > 0 {
			c.b.pause(c.b.tasks.Context(), f.delay)
		}
		if failed == nil {
			sendStart := time.Now()
			c.nc.SetWriteDeadline(sendStart.Add(c.b.cfg.ConnectionsMaxIdle))
			failed = c.writeFrame(f)
			c.b.metrics.rt.responseSent(&f.req, sendStart)
			if failed != nil {
				c.log.Info("write failed; closing", "err", failed)
				c.interrupt()
			}
		}
		c.b.metrics.requestDone(&f.req)
		f.release()
	}
}

func (c *conn) writeFrame(f *frame) error {
	prev := 0
	for _, h := range f.holes {
		if _, err := c.nc.Write(f.buf[prev:h.at]); err != nil {
			return err
		}
		if err := c.sendRange(h.rr); err != nil {
			return err
		}
		prev = h.at
	}
	_, err := c.nc.Write(f.buf[prev:])
	return err
}

// sendRange sends a segment range: sendfile(2) from the page cache when
// both ends allow it, else (TLS, which must encrypt in user space, or an
// in-memory filesystem) through a pooled buffer, so a fetch costs one copy
// into the buffer and crypto/tls's own, and no allocation of its size.
func (c *conn) sendRange(rr storage.ReadResult) error {
	if rr.Size == 0 {
		return nil
	}
	if tcp, ok := c.nc.(*net.TCPConn); ok && !c.b.cfg.DisableSendfile {
		if of, ok := rr.File.(vfs.OSFile); ok && of.OSFile() != nil {
			return sendfile(tcp, of.OSFile(), rr.Position, rr.Size)
		}
	}
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for pos, end := rr.Position, rr.Position+rr.Size; pos < end; {
		n, err := rr.File.ReadAt(buf[:min(int64(len(buf)), end-pos)], pos)
		if n > 0 {
			if _, werr := c.nc.Write(buf[:n]); werr != nil {
				return werr
			}
			pos += int64(n)
		}
		switch {
		case pos == end:
		case err == io.EOF || (err == nil && n == 0):
			return errShortFile
		case err != nil:
			return err
		}
	}
	return nil
}

// copyBuffers hold segment bytes on their way to a socket that cannot
// take them by sendfile. 64 KiB is four TLS records.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 64<<10)
	return &b
}}

// errShortFile: the segment was truncated between the read and the send.
// The frame length is already on the wire, so the connection must close,
// as Kafka closes it in the same case.
var errShortFile = errors.New("broker: segment truncated during sendfile")

func sendfile(dst *net.TCPConn, src *os.File, pos, n int64) error {
	out, err := dst.SyscallConn()
	if err != nil {
		return err
	}
	in, err := src.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	cerr := in.Control(func(infd uintptr) {
		werr := out.Write(func(outfd uintptr) bool {
			for n > 0 {
				k, err := syscall.Sendfile(int(outfd), int(infd), &pos, int(min(n, 1<<30)))
				if k > 0 {
					n -= int64(k)
				}
				switch {
				case err == syscall.EAGAIN:
					return false // wait until the socket is writable
				case err == syscall.EINTR:
				case err != nil:
					opErr = err
					return true
				case k == 0:
					opErr = errShortFile
					return true
				}
			}
			return true
		})
		if opErr == nil {
			opErr = werr
		}
	})
	if cerr != nil {
		return cerr
	}
	return opErr
}

// encodeResponse turns a handler's response into a frame.
func encodeResponse(h requestHeader, resp kmsg.Response) *frame {
	return &frame{buf: appendResponse(nil, h.correlationID, resp)}
}

// remote is the client's address, for logs.
func (c *conn) remote() string {
	if c.nc == nil {
		return ""
	}
	return c.nc.RemoteAddr().String()
}
