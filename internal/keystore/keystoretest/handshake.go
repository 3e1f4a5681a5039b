package keystoretest

import (
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// Handshake is what each end of a TLS handshake saw.
type Handshake struct {
	Server, Client         tls.ConnectionState
	ServerErr, ClientErr   error
	ServerConn, ClientConn *tls.Conn
}

// RunHandshake connects a client to a server over loopback TCP, and has
// the server send one byte, which surfaces a client certificate the
// server refused after a TLS 1.3 client thought itself done. (Not
// net.Pipe: it has no buffer, and TLS 1.3 has both ends write at once.)
// The connection is left open in the result; the test's cleanup closes it.
func RunHandshake(t testing.TB, server, client *tls.Config) Handshake {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	sc.SetDeadline(deadline)
	cc.SetDeadline(deadline)
	t.Cleanup(func() { sc.Close(); cc.Close() })
	s, c := tls.Server(sc, server), tls.Client(cc, client)
	done := make(chan error, 1)
	go func() { // a handshake needs both ends running
		err := s.Handshake()
		if err == nil {
			_, err = s.Write([]byte{1})
		}
		if err != nil {
			sc.Close()
		}
		done <- err
	}()
	var h Handshake
	h.ClientErr = c.Handshake()
	if h.ClientErr == nil {
		_, h.ClientErr = c.Read(make([]byte, 1))
	}
	if h.ClientErr != nil {
		cc.Close()
	}
	h.ServerErr = <-done
	h.Server, h.Client, h.ServerConn, h.ClientConn = s.ConnectionState(), c.ConnectionState(), s, c
	return h
}
