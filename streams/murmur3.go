package streams

import (
	"encoding/binary"
	"math/bits"
)

// murmur3Seed is the seed Kafka's foreign-key join hashes left values
// with (Murmur3.DEFAULT_SEED).
const murmur3Seed = 104729

// murmur3Hash128 is MurmurHash3 x64 128 (Austin Appleby's public-domain
// algorithm), returning the two halves as Kafka's Murmur3.hash128 does;
// the foreign-key join sends them as 16 big-endian bytes.
func murmur3Hash128(data []byte, seed int64) (uint64, uint64) {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h1, h2 := uint64(seed), uint64(seed)
	n := len(data)
	blocks := n / 16
	for i := 0; i < blocks; i++ {
		k1 := binary.LittleEndian.Uint64(data[i*16:])
		k2 := binary.LittleEndian.Uint64(data[i*16+8:])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := data[blocks*16:]
	var k1, k2 uint64
	for i := len(tail) - 1; i >= 8; i-- {
		k2 |= uint64(tail[i]) << (8 * uint(i-8))
	}
	for i := min(len(tail), 8) - 1; i >= 0; i-- {
		k1 |= uint64(tail[i]) << (8 * uint(i))
	}
	if len(tail) > 8 {
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	if len(tail) > 0 {
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// valueHash is the 16-byte hash the foreign-key join attaches to a left
// value, nil for a null value.
func valueHash(serialized []byte) []byte {
	if serialized == nil {
		return nil
	}
	h1, h2 := murmur3Hash128(serialized, murmur3Seed)
	out := make([]byte, 16)
	binary.BigEndian.PutUint64(out, h1)
	binary.BigEndian.PutUint64(out[8:], h2)
	return out
}
