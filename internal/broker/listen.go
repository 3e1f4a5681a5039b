package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// listen binds a listener with Kafka's server socket settings:
// socket.receive.buffer.bytes on the listening socket before it binds
// (accepted sockets inherit it, and TCP agrees on its window scale from it,
// which is why Kafka sets it there) and socket.listen.backlog.size as the
// backlog. Go listens with the system's largest backlog; on Linux calling
// listen(2) again on a listening socket only changes the backlog, so the
// configured one replaces it. -1 keeps the OS default buffer size.
func (b *Broker) listen(ctx context.Context, l Listener) (net.Listener, error) {
	rcv := int(b.cfg.Values.Int("socket.receive.buffer.bytes"))
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if rcv <= 0 {
			return nil
		}
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcv)
		}); err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
	if err != nil {
		return nil, err
	}
	if err := setBacklog(ln, int(b.cfg.Values.Int("socket.listen.backlog.size"))); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket.listen.backlog.size: %w", err)
	}
	return ln, nil
}

func setBacklog(ln net.Listener, backlog int) error {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), backlog) }); err != nil {
		return err
	}
	return lerr
}

// configureConn applies the per-connection socket settings to an accepted
// connection: no Nagle delay, and socket.send.buffer.bytes (Kafka sets it on
// each accepted socket; -1 keeps the OS default).
func (b *Broker) configureConn(nc net.Conn) {
	tcp, ok := nc.(*net.TCPConn)
	if !ok {
		return
	}
	tcp.SetNoDelay(true)
	if snd := int(b.cfg.Values.Int("socket.send.buffer.bytes")); snd > 0 {
		tcp.SetWriteBuffer(snd)
	}
	if b.acceptedHook != nil {
		b.acceptedHook(nc)
	}
}
