package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Linux's default ephemeral range, for systems that do not say theirs.
const (
	defaultEphemeralLow  = 32768
	defaultEphemeralHigh = 60999
	// lowest is where the picked range starts: clear of the well-known
	// and commonly configured service ports (Kafka's 9092, 9644...).
	lowest = 10000
	// minSpan is the smallest range worth picking from.
	minSpan = 2000
)

// rangeFile is where Linux says which ports it hands out for :0.
var rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Pick returns n distinct loopback ports that were free a moment ago, held
// together until all are chosen. Another program may still bind one
// before its user does, but the kernel never hands these out on its own.
func Pick(n int) ([]int, error) {
	lo, hi := pickRange(ephemeralRange())
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	span := hi - lo + 1
	start := rand.IntN(span)
	for i := 0; i < span && len(ports) < n; i++ {
		p := lo + (start+i)%span
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // taken
		}
		held = append(held, ln)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("freeport: only %d of %d loopback ports free in %d-%d", len(ports), n, lo, hi)
	}
	return ports, nil
}

// One picks a single port.
func One() (int, error) {
	ps, err := Pick(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

// ephemeralRange is the kernel's range for :0, or Linux's default.
func ephemeralRange() (int, int) {
	data, err := os.ReadFile(rangeFile)
	if err != nil {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	lo, hi, err := parseRange(string(data))
	if err != nil {
		return defaultEphemeralLow, defaultEphemeralHigh
	}
	return lo, hi
}

func parseRange(s string) (int, int, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, errors.New("want two numbers")
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	if lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, errors.New("not a port range")
	}
	return lo, hi, nil
}

// pickRange is the widest span outside the ephemeral range: below it from
// lowest, or above it. With neither wide enough (a kernel configured to
// hand out nearly every port) it is the upper half of all ports, the
// collisions that remain being the ones :0 has anyway.
func pickRange(ephLo, ephHi int) (int, int) {
	below := ephLo - lowest
	above := 65535 - ephHi
	switch {
	case below >= minSpan && below >= above:
		return lowest, ephLo - 1
	case above >= minSpan:
		return ephHi + 1, 65535
	default:
		return 32768, 65535
	}
}
