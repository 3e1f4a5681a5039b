package broker

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// clientSecurity is how this node connects to a listener of another node
// (the inter-broker listener, a controller listener): TLS with the
// listener's trust and key stores, and a SASL login with the mechanism
// sasl.mechanism.inter.broker.protocol or sasl.mechanism.controller.protocol
// names and the username and password of that listener's JAAS config for
// the mechanism, as Kafka's brokers log in to each other.
type clientSecurity struct {
	tls       *tls.Config
	mechanism sasl.Mechanism
}

// newClientSecurity reads the client side of listener (which may be
// another node's: a broker-only node has no controller listener of its
// own, but the protocol map and the listener.name.<l>. settings name it).
func newClientSecurity(v config.Values, listener, mechanismConfig string) (*clientSecurity, error) {
	protocol, ok := v.SecurityProtocol(listener)
	if !ok {
		return nil, fmt.Errorf("broker: listener.security.protocol.map has no security protocol for %s", listener)
	}
	if protocol == "PLAINTEXT" {
		return nil, nil
	}
	s := &clientSecurity{}
	if protocol == "SSL" || protocol == "SASL_SSL" {
		c, err := auth.NewClientTLS(auth.TLSSettingsFor(v, listener), "")
		if err != nil {
			return nil, fmt.Errorf("broker: TLS to the %s listeners of other nodes: %w", listener, err)
		}
		s.tls = c
	}
	if !strings.HasPrefix(protocol, "SASL_") {
		return s, nil
	}
	name := v.String(mechanismConfig)
	prefix := "listener.name." + strings.ToLower(listener) + "." + strings.ToLower(name) + "."
	raw := v.String(prefix + "sasl.jaas.config")
	j, err := auth.ParseJAAS(raw)
	if raw == "" || err != nil {
		return nil, fmt.Errorf("broker: %s is %s: %ssasl.jaas.config must hold this node's username and password to log in to the other nodes", mechanismConfig, name, prefix)
	}
	user, _ := j.Option("username")
	pass, _ := j.Option("password")
	if user == "" || pass == "" {
		return nil, fmt.Errorf("broker: %s is %s: %ssasl.jaas.config has no username and password for this node's own login", mechanismConfig, name, prefix)
	}
	switch name {
	case auth.MechanismPlain:
		s.mechanism = plain.Auth{User: user, Pass: pass}.AsMechanism()
	case auth.MechanismScramSHA256:
		s.mechanism = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case auth.MechanismScramSHA512:
		s.mechanism = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	default:
		return nil, fmt.Errorf("broker: %s=%s between the nodes is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mechanismConfig, name)
	}
	return s, nil
}

// kgoOpts are the client options of a peer client; none for plaintext.
func (s *clientSecurity) kgoOpts() []kgo.Opt {
	if s == nil {
		return nil
	}
	var opts []kgo.Opt
	if s.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(s.tls.Clone()))
	}
	if s.mechanism != nil {
		opts = append(opts, kgo.SASL(s.mechanism))
	}
	return opts
}

// dialRaft opens a Raft connection to addr secured as the listener asks:
// TLS, then a SASL login in Kafka frames (SaslHandshake v1,
// SaslAuthenticate), after which the connection carries Raft's preamble
// and Raft, as the receiving listener hands an authenticated connection
// that sends the preamble to the controller (raftAfterLogin).
func (s *clientSecurity) dialRaft(addr string, timeout time.Duration) (net.Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil || s == nil {
		return nc, err
	}
	deadline := time.Now().Add(timeout)
	nc.SetDeadline(deadline)
	if s.tls != nil {
		cfg := s.tls.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return nil, fmt.Errorf("broker: TLS to %s: %w", addr, err)
		}
		nc = tc
	}
	if s.mechanism != nil {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if err := saslLogin(ctx, nc, addr, s.mechanism); err != nil {
			nc.Close()
			return nil, fmt.Errorf("broker: SASL login to %s: %w", addr, err)
		}
	}
	nc.SetDeadline(time.Time{})
	return nc, nil
}

// saslLogin runs a client's SASL exchange on a raw connection.
func saslLogin(ctx context.Context, nc net.Conn, addr string, m sasl.Mechanism) error {
	rw := &frameConn{nc: nc, r: bufio.NewReader(nc)}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	resp, err := rw.roundTrip(hs)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode); err != nil {
		return err
	}
	session, token, err := m.Authenticate(ctx, addr)
	if err != nil {
		return err
	}
	for {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, token
		raw, err := rw.roundTrip(req)
		if err != nil {
			return err
		}
		ar := raw.(*kmsg.SASLAuthenticateResponse)
		if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
			if ar.ErrorMessage != nil {
				return fmt.Errorf("%w: %s", err, *ar.ErrorMessage)
			}
			return err
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		token = next
	}
}

// frameConn sends requests and reads responses in Kafka's framing.
type frameConn struct {
	nc   net.Conn
	r    *bufio.Reader
	corr int32
}

func (f *frameConn) roundTrip(req kmsg.Request) (kmsg.Response, error) {
	f.corr++
	buf := appendRequestHeaderAndBody([]byte{0, 0, 0, 0}, req, f.corr, "")
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if _, err := f.nc.Write(buf); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(f.r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(f.r, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != f.corr {
		return nil, fmt.Errorf("response to correlation %d, want %d", got, f.corr)
	}
	return decodeResponseHeaderAndBody(body, req)
}
