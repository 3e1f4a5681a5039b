package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// SamsaPrefix starts the names of Samsa's own broker configs, the ones
// Apache Kafka has no equivalent of. The prefix keeps them apart from
// Kafka's names, present and future, and tells an operator reading
// server.properties that a Kafka broker would not understand the line.
const SamsaPrefix = "samsa."

// SamsaOwn reports whether the entry is one of Samsa's own configs.
func (e *Entry) SamsaOwn() bool { return strings.HasPrefix(e.Name, SamsaPrefix) }

// samsaEntries are the broker configs Kafka does not have.
func samsaEntries() []*Entry {
	return []*Entry{
		{Name: "samsa.http.listener", Type: TypeString, Default: "127.0.0.1:9644", Validator: hostPort{}, Importance: High,
			Wired: "the HTTP listener of /metrics (Prometheus), /healthz and /readyz, bound when the broker is built: a port in use refuses the start (broker/http.go); empty turns it off",
			Doc:   "host:port of the broker's HTTP listener for metrics and health checks; empty for none. Port 0 picks a free port."},
	}
}

// hostPort accepts host:port with a port from 0 to 65535, or the empty
// string for "none".
type hostPort struct{}

func (hostPort) Validate(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("must be host:port or empty: %v", err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q must be a number from 0 to 65535", port)
	}
	return nil
}

func (hostPort) String() string { return "host:port, or empty" }
