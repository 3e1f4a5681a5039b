package mm2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// MirrorSourceConnector keeps its progress as Kafka Connect source offsets:
// for each source partition, the map MirrorUtils.wrapPartition builds
// ({"topic", "partition", "cluster"}: the source topic, its partition and
// the source cluster's alias) and the offset map MirrorUtils.wrapOffset
// builds ({"offset": the source offset of the last record written}). The
// worker stores them in its offsets topic (mm2-offsets.<source>.internal
// for a dedicated MirrorMaker) with the internal JsonConverter,
// schemas.enable=false:
//
//	key:   ["<connector>",{"cluster":"<alias>","partition":<n>,"topic":"<topic>"}]
//	value: {"offset":<offset>}
//
// The key's members are in the order a java.util.HashMap with these three
// keys iterates them (cluster, partition, topic: their hash buckets are 1,
// 3 and 9 of 16), which Jackson keeps; there are no spaces. The bytes
// matter beyond the meaning: the worker's producer partitions the offsets
// topic by the key's murmur2 hash and compaction keeps one record per key
// bytes, so a key written with other spacing or order would land beside
// Kafka's instead of replacing it.
//
// On start MirrorSourceTask seeks each partition to offset+1; an offset
// that is absent, null or negative means "not started", and the task then
// starts where the consumer's auto.offset.reset says.

// SourceOffsetKey is the offsets-topic key for one source partition of a
// MirrorSourceConnector named connector (for a dedicated MirrorMaker,
// "MirrorSourceConnector").
func SourceOffsetKey(connector, cluster, topic string, partition int32) []byte {
	b := make([]byte, 0, 48+len(connector)+len(cluster)+len(topic))
	b = append(b, '[')
	b = appendJacksonString(b, connector)
	b = append(b, `,{"cluster":`...)
	b = appendJacksonString(b, cluster)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(partition), 10)
	b = append(b, `,"topic":`...)
	b = appendJacksonString(b, topic)
	return append(b, "}]"...)
}

// SourceOffsetValue is the offsets-topic value: the source offset of the
// last record the target acknowledged (not the next one to read).
func SourceOffsetValue(offset int64) []byte {
	b := append(make([]byte, 0, 32), `{"offset":`...)
	b = strconv.AppendInt(b, offset, 10)
	return append(b, '}')
}

// ErrNotMirrorSource marks an offsets-topic key that is well-formed JSON
// but not a MirrorSourceConnector partition (another connector's, or MM2's
// checkpoint and heartbeat connectors', whose partitions have other keys).
// A worker's offsets topic holds all of them; skip these.
var ErrNotMirrorSource = errors.New("mm2: not a MirrorSourceConnector source partition")

// DecodeSourceOffset reads an offsets-topic record written by
// SourceOffsetKey and SourceOffsetValue or by Kafka's worker. It accepts
// what Kafka's JsonConverter and MirrorUtils accept: members in any order
// and with any spacing, the partition as any integer from 0 to
// 2147483647. A nil value (a tombstone: the offset was reset, KIP-875), a
// null offset or a negative one all decode as offset -1, "not started", as
// MirrorUtils.unwrapOffset and MirrorSourceTask.isUncommitted read them.
// A partition map with other keys than the three above is
// ErrNotMirrorSource, since Kafka looks offsets up by the exact map.
func DecodeSourceOffset(key, value []byte) (connector, cluster, topic string, partition int32, offset int64, err error) {
	connector, cluster, topic, partition, err = decodeSourceOffsetKey(key)
	if err != nil {
		return "", "", "", 0, 0, err
	}
	offset, err = decodeSourceOffsetValue(value)
	if err != nil {
		return "", "", "", 0, 0, err
	}
	return connector, cluster, topic, partition, offset, nil
}

func decodeSourceOffsetKey(key []byte) (connector, cluster, topic string, partition int32, err error) {
	var parts []json.RawMessage
	if err := strictUnmarshal(key, &parts); err != nil {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: %v", ErrMalformed, err)
	}
	if len(parts) != 2 {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: want [connector, partition], got %d elements", ErrMalformed, len(parts))
	}
	if err := strictUnmarshal(parts[0], &connector); err != nil || isNull(parts[0]) {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: connector name is not a string", ErrMalformed)
	}
	var m map[string]json.RawMessage
	if err := strictUnmarshal(parts[1], &m); err != nil || m == nil {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: source partition is not an object", ErrMalformed)
	}
	if len(m) != 3 || m["cluster"] == nil || m["topic"] == nil || m["partition"] == nil {
		return "", "", "", 0, fmt.Errorf("%w: connector %q, source partition %s", ErrNotMirrorSource, connector, parts[1])
	}
	if err := strictUnmarshal(m["cluster"], &cluster); err != nil || isNull(m["cluster"]) {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: 'cluster' must be a string", ErrMalformed)
	}
	if err := strictUnmarshal(m["topic"], &topic); err != nil || isNull(m["topic"]) {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: 'topic' must be a string", ErrMalformed)
	}
	p, ok := jsonInteger(m["partition"])
	if !ok || p < 0 || p > math.MaxInt32 {
		return "", "", "", 0, fmt.Errorf("%w: source offset key: 'partition' must be an integer from 0 to %d, got %s", ErrMalformed, math.MaxInt32, m["partition"])
	}
	return connector, cluster, topic, int32(p), nil
}

func decodeSourceOffsetValue(value []byte) (int64, error) {
	if value == nil {
		return -1, nil
	}
	var m map[string]json.RawMessage
	if err := strictUnmarshal(value, &m); err != nil {
		return 0, fmt.Errorf("%w: source offset value: %v", ErrMalformed, err)
	}
	raw, ok := m["offset"]
	if m == nil || !ok || isNull(raw) {
		return -1, nil
	}
	off, ok := jsonInteger(raw)
	if !ok {
		return 0, fmt.Errorf("%w: source offset value: 'offset' must be an integer, got %s", ErrMalformed, raw)
	}
	if off < 0 {
		return -1, nil
	}
	return off, nil
}

// strictUnmarshal decodes one JSON value and refuses trailing data.
func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	if _, err := d.Token(); err == nil {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonInteger reads a JSON number Jackson would read as an integer node
// (no fraction, no exponent) that fits an int64; JsonConverter then gives
// MirrorUtils a Long.
func jsonInteger(raw json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || bytes.ContainsAny([]byte(s), ".eE\"") {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// appendJacksonString writes s as a JSON string the way Jackson does for
// Kafka's JsonConverter: '"' and '\' escaped, the control characters with
// their short escapes (\b \t \n \f \r) or \u00XX in upper-case hex, and
// everything else, '/' and non-ASCII included, as it is. (Go's
// encoding/json would also escape <, >, & and U+2028/9.) Invalid UTF-8,
// which a Java string cannot hold, is written as U+FFFD.
func appendJacksonString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}
