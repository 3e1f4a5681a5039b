package broker

import (
	"net"
	"testing"
)

// The host an ACL is matched against is the client's IP as Java prints
// it: Kafka compares the strings.
func TestJavaHostAddress(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 9092}, "127.0.0.1"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1).To4(), Port: 1}, "10.0.0.1"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.168.1.2"), Port: 1}, "192.168.1.2"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, "0:0:0:0:0:0:0:1"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8::ff00:42:8329"), Port: 1}, "2001:db8:0:0:0:ff00:42:8329"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"}, "fe80:0:0:0:0:0:0:1%eth0"},
		{&net.UDPAddr{IP: net.ParseIP("::1"), Port: 1}, "0:0:0:0:0:0:0:1"},
		{&net.UnixAddr{Name: "/tmp/sock", Net: "unix"}, "/tmp/sock"},
	} {
		if got := javaHostAddress(tt.addr); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.addr, got, tt.want)
		}
	}
}
