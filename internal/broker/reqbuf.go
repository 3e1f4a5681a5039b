package broker

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request buffers. Every request is read whole into a buffer before it is
// decoded, and kmsg's decoded requests alias that buffer (record batches,
// group member metadata). Most requests may keep pieces of it (a joining
// member's metadata lives on in the group), so their buffers are left to the
// garbage collector. Produce requests are the large, frequent ones, and
// nothing of them outlives their handler: the batches are copied into the
// log (or refused) before handleProduce returns, and the response is encoded
// into a buffer of its own. Their buffers come from size-class pools and go
// back after the handler, which spares the broker a fresh zeroed megabyte
// per produce request and the collector most of its work under produce
// load. Keep handleProduce synchronous with respect to its request bytes,
// or stop recycling them here.
const (
	minPooledShift   = 12 // 4 KiB
	maxPooledShift   = 26 // 64 MiB
	minPooledRequest = 1 << minPooledShift
	maxPooledRequest = 1 << maxPooledShift
)

// requestPools[i] holds buffers of capacity 1<<(i+minPooledShift).
var requestPools [maxPooledShift - minPooledShift + 1]sync.Pool

// poolClass is the pool for a request of size bytes, or -1 if none.
func poolClass(size int) int {
	if size < minPooledRequest || size > maxPooledRequest {
		return -1
	}
	return bits.Len(uint(size-1)) - minPooledShift
}

// requestBuffer returns a buffer of len size: pooled (not zeroed: the
// caller fills it entirely) for sizes that may be recycled, else new.
func requestBuffer(size int) []byte {
	c := poolClass(size)
	if c < 0 {
		return make([]byte, size)
	}
	if p, ok := requestPools[c].Get().(*[]byte); ok {
		return (*p)[:size]
	}
	return make([]byte, size, 1<<(c+minPooledShift))
}

// recycleRequest returns buf to its pool if it held a Produce request,
// whose handler has returned.
func recycleRequest(buf []byte) {
	if len(buf) < 2 || kmsg.Key(binary.BigEndian.Uint16(buf)) != kmsg.Produce {
		return
	}
	c := poolClass(cap(buf))
	if c < 0 || cap(buf) != 1<<(c+minPooledShift) {
		return
	}
	buf = buf[:0]
	requestPools[c].Put(&buf)
}
