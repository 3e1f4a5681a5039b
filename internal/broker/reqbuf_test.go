package broker

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRequestBufferClasses(t *testing.T) {
	for _, c := range []struct{ size, cap int }{
		{100, 100},               // small: a plain allocation
		{4096, 4096},             // the smallest pooled class
		{4097, 8192},             // rounded up to its class
		{1 << 20, 1 << 20},       // exactly a class
		{64 << 20, 64 << 20},     // the largest class
		{64<<20 + 1, 64<<20 + 1}, // too large to pool
	} {
		buf := requestBuffer(c.size)
		if len(buf) != c.size || cap(buf) != c.cap {
			t.Errorf("requestBuffer(%d): len %d cap %d, want cap %d", c.size, len(buf), cap(buf), c.cap)
		}
	}
}

// Only Produce buffers go back to the pools: other requests' decoded forms
// may keep slices of theirs.
func TestRecycleOnlyProduce(t *testing.T) {
	for _, key := range []kmsg.Key{kmsg.JoinGroup, kmsg.Fetch} {
		buf := requestBuffer(8192)
		binary.BigEndian.PutUint16(buf, uint16(key))
		recycleRequest(buf)
		for range 100 { // a pool hit would hand back buf itself
			if got := requestBuffer(8192); &got[0] == &buf[0] {
				t.Fatalf("a %s request's buffer was recycled", key.Name())
			}
		}
	}
}
