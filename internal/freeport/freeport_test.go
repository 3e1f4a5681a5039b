package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickIsOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	ports, err := Pick(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d picked twice in %v", p, ports)
		}
		seen[p] = true
		if p >= lo && p <= hi {
			t.Fatalf("port %d is in the ephemeral range %d-%d", p, lo, hi)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("picked port %d is not free: %v", p, err)
		}
		ln.Close()
	}
}

func TestPickSkipsBoundPorts(t *testing.T) {
	// A port bound since it was picked is never picked again.
	lo, hi := pickRange(ephemeralRange())
	first, err := Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(first[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range 50 {
		p, err := One()
		if err != nil {
			t.Fatal(err)
		}
		if p == first[0] {
			t.Fatalf("picked %d, which is bound", p)
		}
		if p < lo || p > hi {
			t.Fatalf("picked %d outside %d-%d", p, lo, hi)
		}
	}
}

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		in             string
		wantLo, wantHi int
		bad            bool
	}{
		{in: "32768\t60999\n", wantLo: 32768, wantHi: 60999},
		{in: "1024 65535", wantLo: 1024, wantHi: 65535},
		{in: "60999", bad: true},
		{in: "a b", bad: true},
		{in: "5 3", bad: true},
	} {
		lo, hi, err := parseRange(c.in)
		if (err != nil) != c.bad || (!c.bad && (lo != c.wantLo || hi != c.wantHi)) {
			t.Errorf("parseRange(%q) = %d %d %v", c.in, lo, hi, err)
		}
	}
	for _, c := range []struct{ ephLo, ephHi, lo, hi int }{
		{32768, 60999, 10000, 32767},
		{49152, 65535, 10000, 49151},
		{1024, 40000, 40001, 65535},
		{1024, 65000, 32768, 65535},
	} {
		if lo, hi := pickRange(c.ephLo, c.ephHi); lo != c.lo || hi != c.hi {
			t.Errorf("pickRange(%d, %d) = %d-%d, want %d-%d", c.ephLo, c.ephHi, lo, hi, c.lo, c.hi)
		}
	}
}
