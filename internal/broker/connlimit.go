package broker

import (
	"context"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/config"
)

// connLimits caps the connections the broker holds open, as Kafka's
// ConnectionQuotas do: max.connections across every listener and
// listener.name.<listener>.max.connections for one. A listener's acceptor
// takes a slot for each connection it accepts; at either limit it waits,
// holding that connection unread, until a connection closes (or the limits
// rise), and meanwhile new connections wait in the listen backlog
// (socket.listen.backlog.size), as they do in Kafka. Connections from one IP
// are capped by max.connections.per.ip and its overrides; past that cap a
// new connection is closed at once, as Kafka closes it. Kafka exempts the inter-broker listener from the broker-wide limit;
// a single node has no inter-broker traffic, so no listener is exempt here.
type connLimits struct {
	mu struct {
		sync.Mutex
		open        map[string]int // by listener
		total       int
		max         int            // broker-wide
		maxListener map[string]int // absent: no limit of its own
		// freed is closed and replaced whenever a slot may have freed: a
		// connection closed or the limits changed.
		freed chan struct{}

		byIP      map[string]int // open connections by remote IP
		maxPerIP  int            // max.connections.per.ip
		ipMax     map[string]int // max.connections.per.ip.overrides, by IP
		overrides string         // the overrides ipMax was resolved from
	}
}

func newConnLimits() *connLimits {
	l := &connLimits{}
	l.mu.open = map[string]int{}
	l.mu.max = math.MaxInt32
	l.mu.freed = make(chan struct{})
	l.mu.byIP = map[string]int{}
	l.mu.maxPerIP = math.MaxInt32
	return l
}

// admitIP counts a new connection from ip against max.connections.per.ip
// (or its override for ip); false when ip is at its limit, and the
// connection must be closed at once, as Kafka closes it
// (TooManyConnectionsException).
func (l *connLimits) admitIP(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	max, ok := l.mu.ipMax[ip]
	if !ok {
		max = l.mu.maxPerIP
	}
	if l.mu.byIP[ip] >= max {
		return false
	}
	l.mu.byIP[ip]++
	return true
}

// leaveIP uncounts a connection admitIP admitted.
func (l *connLimits) leaveIP(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.byIP[ip]--; l.mu.byIP[ip] <= 0 {
		delete(l.mu.byIP, ip)
	}
}

// acquire waits for a slot on listener; false when ctx ends first.
func (l *connLimits) acquire(ctx context.Context, listener string) bool {
	for {
		l.mu.Lock()
		if l.fitsLocked(listener) {
			l.mu.open[listener]++
			l.mu.total++
			l.mu.Unlock()
			return true
		}
		freed := l.mu.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}

func (l *connLimits) fitsLocked(listener string) bool {
	if l.mu.total >= l.mu.max {
		return false
	}
	max, ok := l.mu.maxListener[listener]
	return !ok || l.mu.open[listener] < max
}

// release frees a slot taken by acquire.
func (l *connLimits) release(listener string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.open[listener]--
	l.mu.total--
	l.wakeLocked()
}

func (l *connLimits) wakeLocked() {
	close(l.mu.freed)
	l.mu.freed = make(chan struct{})
}

// set applies the limits of a broker config (dynamic updates included) to
// the listeners; connections already open stay open, as in Kafka.
func (l *connLimits) set(v config.Values, listeners []Listener) {
	perListener := map[string]int{}
	for _, ln := range listeners {
		name := "listener.name." + strings.ToLower(ln.Name) + ".max.connections"
		if v.IsSet(name) {
			perListener[ln.Name] = int(v.Int(name))
		}
	}
	overrides := v.String("max.connections.per.ip.overrides")
	l.mu.Lock()
	resolved := l.mu.overrides == overrides && l.mu.ipMax != nil
	l.mu.Unlock()
	var ipMax map[string]int
	if !resolved {
		ipMax = resolveIPOverrides(overrides)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.max = int(v.Int("max.connections"))
	l.mu.maxListener = perListener
	l.mu.maxPerIP = int(v.Int("max.connections.per.ip"))
	if !resolved {
		l.mu.ipMax, l.mu.overrides = ipMax, overrides
	}
	l.wakeLocked()
}

// resolveIPOverrides maps max.connections.per.ip.overrides (host:count
// pairs, validated by the catalog) to counts by IP. A host name counts for
// each of its addresses, looked up when the value changes, as Kafka looks
// it up when it reads the config; a name that does not resolve is skipped.
func resolveIPOverrides(s string) map[string]int {
	out := map[string]int{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		i := strings.LastIndexByte(pair, ':')
		if i < 0 {
			continue
		}
		host := strings.Trim(strings.TrimSpace(pair[:i]), "[]")
		n, err := strconv.Atoi(strings.TrimSpace(pair[i+1:]))
		if err != nil {
			continue
		}
		if ip := net.ParseIP(host); ip != nil {
			out[ip.String()] = n
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		addrs, _ := net.DefaultResolver.LookupHost(ctx, host)
		cancel()
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil {
				out[ip.String()] = n
			}
		}
	}
	return out
}

// remoteIP is the IP a connection counts against.
func remoteIP(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return nc.RemoteAddr().String()
}
