package model

import (
	"math"
	"unicode/utf16"
)

// KeyPartition is the partition of an internal topic that holds a key, as
// Kafka places it: Utils.abs(key.hashCode()) % n, with Java's
// String.hashCode over UTF-16 code units in wrapping int32 arithmetic and
// Kafka's abs, which maps MinInt32 to 0. Group IDs (__consumer_offsets),
// transactional IDs (__transaction_state) and share-partition keys
// (__share_group_state) live where they would on an Apache Kafka cluster
// with the same partition count, which matters to anyone reading those
// topics with Kafka's tools. Kafka decodes the keys from UTF-8, so a
// character outside the BMP counts as its two surrogates; invalid UTF-8
// counts as U+FFFD per bad byte, where Java's decoder may replace a longer
// bad sequence with one (no real client sends such a key). n <= 0 is 0.
func KeyPartition(key string, n int32) int32 {
	if n <= 0 {
		return 0
	}
	h := javaStringHash(key)
	if h == math.MinInt32 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % n
}

// javaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units with int32 wrap-around.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
