package controller

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// RaftPreamble opens every Raft connection on the controller listener. Its
// first byte, 0xFF, cannot begin a Kafka request, whose first four bytes are
// a positive int32 size; so the listener tells the two apart by one byte
// and hands Raft's connections to the controller (see docs/DESIGN-cluster.md,
// "Why the Raft traffic is not the Kafka protocol").
var RaftPreamble = [4]byte{0xFF, 'S', 'R', 'F'}

// ErrBadPreamble is a connection that began with 0xFF but not RaftPreamble.
var ErrBadPreamble = errors.New("controller: connection is neither Kafka nor Raft")

// ReadPreamble reads the rest of the preamble from a connection whose first
// byte was 0xFF.
func ReadPreamble(r io.Reader) error {
	var rest [3]byte
	if _, err := io.ReadFull(r, rest[:]); err != nil {
		return fmt.Errorf("controller: read raft preamble: %w", err)
	}
	if [3]byte(RaftPreamble[1:]) != rest {
		return ErrBadPreamble
	}
	return nil
}

// streamLayer is hashicorp/raft's network layer on the controller
// listener: the broker accepts the connections and hands the Raft ones over
// with serve; Dial opens a connection to a peer's controller listener and
// writes the preamble.
type streamLayer struct {
	addr   advertisedAddr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	// dial connects to a peer's listener, secured as it asks.
	dial func(addr string, timeout time.Duration) (net.Conn, error)
}

// advertisedAddr is the address the quorum knows this node by
// (controller.quorum.voters), which is what Raft puts in its configuration.
type advertisedAddr string

func (a advertisedAddr) Network() string { return "tcp" }
func (a advertisedAddr) String() string  { return string(a) }

func newStreamLayer(addr string, dial func(string, time.Duration) (net.Conn, error)) *streamLayer {
	if dial == nil {
		dial = func(addr string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout("tcp", addr, timeout)
		}
	}
	return &streamLayer{addr: advertisedAddr(addr), conns: make(chan net.Conn), closed: make(chan struct{}), dial: dial}
}

// serve hands a Raft connection (preamble already read) to the transport.
// It blocks until the transport takes it, and closes it if the layer is
// closed first.
func (s *streamLayer) serve(conn net.Conn) {
	select {
	case s.conns <- conn:
	case <-s.closed:
		conn.Close()
	}
}

func (s *streamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

func (s *streamLayer) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *streamLayer) Addr() net.Addr { return s.addr }

func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	conn, err := s.dial(string(address), timeout)
	if err != nil {
		return nil, err
	}
	conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(RaftPreamble[:]); err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetWriteDeadline(time.Time{})
	return conn, nil
}
