package broker

// Authorization: Kafka's StandardAuthorizer (internal/auth) over the ACLs
// of the metadata image, asked by each handler before it acts, with the
// operations and resources Kafka's "Operations and Resources on
// Protocols" table gives the API (auth.APIRequirements).
//
// authorizer.class.name empty means no authorizer: b.authorizer() is nil,
// every check allows, and the ACL APIs answer SECURITY_DISABLED. Set to
// org.apache.kafka.metadata.authorizer.StandardAuthorizer, the broker
// holds an auth.Authorizer built from the image's ACLs, super.users and
// allow.everyone.if.no.acl.found, rebuilt by applyImage only when one of
// them changed; a check is one atomic load and a map lookup or two, and
// allocates nothing.
//
// Who asks is the connection's principal (conn.principal: ANONYMOUS on
// PLAINTEXT, the certificate's on SSL, the SASL login's on SASL_*), from
// the client's IP address as Java prints it (aclHost). Brokers and
// controllers talk to each other over PLAINTEXT as ANONYMOUS (their own
// clients have no TLS or SASL yet), so a cluster with an authorizer needs
// User:ANONYMOUS in super.users, as Kafka does with a PLAINTEXT
// inter-broker listener; anyone who can reach a PLAINTEXT listener is then
// a super user, so such listeners belong on a private network.
//
// Forwarding (forward.go): Kafka's brokers wrap a forwarded request in an
// Envelope that carries the client's principal to the controller. Samsa's
// do so for the delegation token writes (58_envelope.go: CLUSTER_ACTION
// on the Envelope, then the inner request authorized as the principal and
// client address it carries, authorizeToken); the other writes they
// re-send as they are, which the controller sees as ANONYMOUS from
// a peer; so the receiving broker authorizes first, with the client's
// principal, and forwards only what was allowed, merging its denials
// into the controller's answer.
//
// Every denial is counted per API (AuthorizationDenials) and logged in one
// rate-limited audit line per request (the first denial's principal,
// host, operation and resource, and how many the request had). Checks
// that only narrow a listing, or try a cluster-wide permission before a
// per-resource one, are made without audit, as Kafka makes them with
// logIfDenied=false; DescribeDelegationToken's are audited, as Kafka's.

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
)

// authzState is the broker's authorizer and what it was built from.
type authzState struct {
	current atomic.Pointer[auth.Authorizer]
	// Guarded by Broker.metaMu (applyImage).
	opts auth.AuthorizerOptions
	acls []metadata.ACLWithID
}

// authorizer is the current authorizer, nil without one.
func (b *Broker) authorizer() *auth.Authorizer { return b.authz.current.Load() }

// authorizerEnabled reports whether authorizer.class.name names one; the
// ACL APIs answer SECURITY_DISABLED otherwise, as Kafka's broker does.
func (b *Broker) authorizerEnabled() bool { return b.authorizer() != nil }

// authorizerConfig reads authorizer.class.name, super.users and
// allow.everyone.if.no.acl.found (validated by the config catalog).
func authorizerConfig(v config.Values) (enabled bool, opts auth.AuthorizerOptions) {
	enabled = v.String("authorizer.class.name") != ""
	for _, s := range strings.Split(v.String("super.users"), ";") {
		if p, err := auth.ParsePrincipal(strings.TrimSpace(s)); err == nil {
			opts.SuperUsers = append(opts.SuperUsers, p)
		}
	}
	opts.AllowEveryoneIfNoACLFound = v.Bool("allow.everyone.if.no.acl.found")
	return enabled, opts
}

// refreshAuthorizer rebuilds the authorizer when the image's ACLs or the
// authorizer's configs differ from those it was built from. Called with
// metaMu held.
func (b *Broker) refreshAuthorizer(img *metadata.Image, bc config.Values) {
	s := &b.authz
	enabled, opts := authorizerConfig(bc)
	if !enabled {
		s.current.Store(nil)
		return
	}
	acls := img.ACLs()
	if s.current.Load() != nil && slices.Equal(acls, s.acls) && sameAuthorizerOptions(opts, s.opts) {
		return
	}
	converted := make([]auth.ACL, len(acls))
	for i, a := range acls {
		converted[i] = authACL(a.ACL)
	}
	s.acls, s.opts = acls, opts
	s.current.Store(auth.NewAuthorizer(converted, opts))
}

// initAuthorizer sets up the authorizer of the static config, with no
// ACLs until the first image: requests served before it (a controller
// listener's, while the quorum forms) pass only for super users.
func (b *Broker) initAuthorizer() {
	if enabled, opts := authorizerConfig(b.cfg.Values); enabled {
		b.authz.opts = opts
		b.authz.current.Store(auth.NewAuthorizer(nil, opts))
	}
}

func sameAuthorizerOptions(x, y auth.AuthorizerOptions) bool {
	return x.AllowEveryoneIfNoACLFound == y.AllowEveryoneIfNoACLFound && slices.Equal(x.SuperUsers, y.SuperUsers)
}

// authACL is a metadata log ACL as the authorizer takes it.
func authACL(a metadata.ACL) auth.ACL {
	return auth.ACL{
		ResourceType: kmsg.ACLResourceType(a.ResourceType), ResourceName: a.ResourceName,
		PatternType: kmsg.ACLResourcePatternType(a.PatternType), Principal: a.Principal, Host: a.Host,
		Operation: kmsg.ACLOperation(a.Operation), Permission: kmsg.ACLPermissionType(a.PermissionType),
	}
}

// authorize reports whether the connection's principal may do op on the
// resource, and audits a denial.
func (b *Broker) authorize(c *conn, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	a := b.authorizer()
	if a == nil || a.Authorize(c.principal, c.aclHost(), op, rt, name) {
		return true
	}
	b.denied(c, op, rt, name)
	return false
}

// permits is authorize without the audit, for the checks Kafka makes
// with logIfDenied=false: a listing's omissions, a cluster-wide
// permission tried before a per-resource one.
func (b *Broker) permits(c *conn, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	a := b.authorizer()
	return a == nil || a.Authorize(c.principal, c.aclHost(), op, rt, name)
}

// authorizeCluster is authorize on the CLUSTER resource.
func (b *Broker) authorizeCluster(c *conn, op kmsg.ACLOperation) bool {
	return b.authorize(c, op, kmsg.ACLResourceTypeCluster, auth.ClusterName)
}

// permitsCluster is permits on the CLUSTER resource.
func (b *Broker) permitsCluster(c *conn, op kmsg.ACLOperation) bool {
	return b.permits(c, op, kmsg.ACLResourceTypeCluster, auth.ClusterName)
}

// authorizeEach returns authorize for op on resources of type rt that
// asks once per name, as Kafka's filterByAuthorized does: a name the
// request repeats is decided, counted and logged once.
func (b *Broker) authorizeEach(c *conn, op kmsg.ACLOperation, rt kmsg.ACLResourceType) func(name string) bool {
	if b.authorizer() == nil {
		return allowAll
	}
	decided := map[string]bool{}
	return func(name string) bool {
		ok, done := decided[name]
		if !done {
			ok = b.authorize(c, op, rt, name)
			decided[name] = ok
		}
		return ok
	}
}

func allowAll(string) bool { return true }

// filterDenied keeps the items allow allows and reports, per item,
// whether it was dropped: nil, with items itself, when none was. kept is
// never nil when items is not: to some APIs a null list means all.
func filterDenied[T any](items []T, allow func(T) bool) (kept []T, denied []bool) {
	for i, it := range items {
		if allow(it) {
			if denied != nil {
				kept = append(kept, it)
			}
			continue
		}
		if denied == nil {
			denied = make([]bool, len(items))
			kept = append(make([]T, 0, len(items)), items[:i]...)
		}
		denied[i] = true
	}
	if denied == nil {
		return items, nil
	}
	return kept, denied
}

// mergeDenied answers n items in their order: item i with refused(i)
// when that holds an answer, the others with the results of the items
// sent on, which come in the order of the items (as this broker's
// handlers and the controller answer).
func mergeDenied[R any](n int, refused func(i int) (R, bool), results []R) []R {
	out := make([]R, 0, n)
	for i := range n {
		if r, ok := refused(i); ok {
			out = append(out, r)
		} else if len(results) > 0 {
			out = append(out, results[0])
			results = results[1:]
		}
	}
	return append(out, results...)
}

// authorizedOperations is KIP-430's bitfield of what the principal may do
// on a resource: without an authorizer every operation the resource type
// supports, as Kafka reports it.
func (b *Broker) authorizedOperations(c *conn, rt kmsg.ACLResourceType, name string) int32 {
	return b.authorizer().AuthorizedOperations(c.principal, c.aclHost(), rt, name, auth.SupportedOperations(rt))
}

// notRequestedOperations is the authorized-operations field of a response
// whose request did not ask for it (Integer.MIN_VALUE, KIP-430).
const notRequestedOperations = int32(-2147483648)

// connAuthz is a connection's authorization state: its client's address
// as ACLs name it, and the audit of the request being handled (a
// connection handles one at a time).
type connAuthz struct {
	host    string // "" until first asked
	api     kmsg.Key
	denials int
	first   authzDenial
}

type authzDenial struct {
	// principal and host are who asked: the connection's, or the client's
	// an Envelope carries.
	principal auth.Principal
	host      string
	op        kmsg.ACLOperation
	rt        kmsg.ACLResourceType
	name      string
}

// aclHost is the client's IP address as Kafka's authorizer compares it
// with an ACL's host, computed once per connection.
func (c *conn) aclHost() string {
	if c.authz.host == "" && c.nc != nil {
		c.authz.host = javaHostAddress(c.nc.RemoteAddr())
	}
	return c.authz.host
}

// javaHostAddress prints an address's IP as Java's
// InetAddress.getHostAddress does, which is what Kafka matches ACL hosts
// against, as strings: IPv4, and IPv4-mapped IPv6 (Java makes those
// Inet4Address), dotted (10.0.0.1); IPv6 as eight groups of lower-case hex
// without leading zeros and without "::" compression (0:0:0:0:0:0:0:1,
// fe80:0:0:0:0:0:0:1), so ACLs written for Kafka match unchanged, and
// "::1" in an ACL matches no one, as in Kafka. A zone follows "%" as Go
// names it (an interface name where Java may print a number).
func javaHostAddress(addr net.Addr) string {
	var ip net.IP
	zone := ""
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, zone = a.IP, a.Zone
	default:
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return addr.String()
		}
		host, zone, _ = strings.Cut(host, "%")
		ip = net.ParseIP(host)
		if ip == nil {
			return host
		}
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	if len(ip) != net.IPv6len {
		return ip.String()
	}
	buf := make([]byte, 0, 40+len(zone))
	for i := 0; i < net.IPv6len; i += 2 {
		if i > 0 {
			buf = append(buf, ':')
		}
		buf = strconv.AppendUint(buf, uint64(ip[i])<<8|uint64(ip[i+1]), 16)
	}
	if zone != "" {
		buf = append(append(buf, '%'), zone...)
	}
	return string(buf)
}

// beginAudit starts the audit of a request.
func (c *conn) beginAudit(key kmsg.Key) {
	c.authz.api, c.authz.denials = key, 0
}

// denied counts a denial and keeps the request's first for its audit
// line.
func (b *Broker) denied(c *conn, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) {
	b.deniedAs(c, c.principal, c.aclHost(), op, rt, name)
}

// deniedAs is denied for a check made as principal from host on the
// connection's request: an Envelope's inner request.
func (b *Broker) deniedAs(c *conn, principal auth.Principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) {
	if k := c.authz.api; k >= 0 && int(k) < len(b.counters.authzDenials) {
		b.counters.authzDenials[k].Add(1)
	}
	if c.authz.denials == 0 {
		c.authz.first = authzDenial{principal: principal, host: host, op: op, rt: rt, name: name}
	}
	c.authz.denials++
}

// endAudit writes the request's audit line if it had a denial: at most
// one a second, with the count of those held back (rateLimitedLog).
func (b *Broker) endAudit(c *conn) {
	if c.authz.denials == 0 {
		return
	}
	d := c.authz.first
	b.authLog.log(b.cfg.Clock.Now(), "authorization denied", "api", c.authz.api.Name(),
		"principal", d.principal.String(), "host", d.host, "operation", d.op.String(),
		"resource_type", d.rt.String(), "resource_name", d.name, "denials_in_request", c.authz.denials,
		"listener", c.listener, "client_id", c.clientID)
	c.authz.denials = 0
}

// AuthorizationDenials reports how many authorization checks of the API
// were denied since the broker started.
func (b *Broker) AuthorizationDenials(key kmsg.Key) int64 {
	if key < 0 || int(key) >= len(b.counters.authzDenials) {
		return 0
	}
	return b.counters.authzDenials[key].Load()
}
