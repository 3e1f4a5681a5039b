package broker

// Structured edits for the per-key request fuzzers. A byte-level mutation
// of a request frame rarely decodes (a length off by one misaligns the
// rest), so most raw inputs stop at the decoder. The per-key targets take
// a second input, edits, applied to the decoded frame's fields before it
// is encoded again: an edited input always decodes, and reaches the
// handler with values no client sends (negative counts, duplicate or
// missing entries, null strings, other entities' names, IDs of the wrong
// topic). The fuzzer mutates both: the frame to explore the decoder, the
// edits to explore the handler.
//
// Each edit is three bytes: which field (a leaf of the request, walked
// depth-first in declaration order, slice elements included; the walk is
// redone after each edit so a new element's fields are in reach), which
// change, and an operand. Some changes read more bytes (a string's
// content).

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzNames are strings worth trying wherever a request takes a string:
// what the harness set up, Kafka's internal topics, and names the
// validators have rules about.
var fuzzNames = []string{
	fuzzTopic, fuzzGroup, fuzzInstance, fuzzConsumerGroup, fuzzMember, fuzzTxnID, fuzzCreatedTopic,
	"__consumer_offsets", "__transaction_state", "__cluster_metadata", "fuzz-empty-group",
	"", ".", "..", "a/b", "fuzz.topic", "fuzz_topic", strings.Repeat("x", 250), strings.Repeat("y", 300),
	"\x00", "fu\xffzz", ".*", "(", "fuzz|__.*", "range", "uniform", "roundrobin", "consumer", "classic",
	"cleanup.policy", "compact", "delete", "compact,delete", "retention.ms", "segment.bytes",
	"max.message.bytes", "min.insync.replicas", "message.timestamp.type", "LogAppendTime",
	"compression.type", "zstd", "num.partitions", "log.retention.ms", "-1", "0", "2147483648",
	"Ongoing", "PrepareCommit", "CompleteAbort", "Empty", "Stable", "Dead", "1",
}

// fuzzInts are integers worth trying wherever a request takes one.
var fuzzInts = []int64{
	0, -1, 1, 2, -2, -3, 3, 7, 8, 1000, 60000, 1 << 20, math.MaxInt8, math.MaxInt16, math.MaxInt32,
	math.MinInt32, math.MaxInt64, math.MinInt64, int64(fuzzProducerID), 1 << 31, -1 << 31, 100, 99,
}

// Bounds on what edits build: a string doubled at every edit, or a slice
// of slices duplicated, would otherwise grow without limit within one
// input and take the fuzzing process down for lack of memory.
const (
	maxFuzzElements = 64   // elements of one slice
	maxFuzzString   = 1024 // bytes of one string
	maxFuzzLeaves   = 2048 // fields of the whole request; edits stop past it
)

// applyFuzzEdits applies edits to req in place.
func applyFuzzEdits(req kmsg.Request, edits []byte) {
	for len(edits) >= 3 {
		var leaves []reflect.Value
		collectFuzzLeaves(reflect.ValueOf(req).Elem(), &leaves)
		if len(leaves) == 0 || len(leaves) > maxFuzzLeaves {
			return
		}
		leaf, op, arg := leaves[int(edits[0])%len(leaves)], edits[1], edits[2]
		edits = edits[3:]
		edits = editFuzzLeaf(leaf, op, arg, edits)
	}
}

// collectFuzzLeaves lists the editable values under v: scalars, strings,
// byte slices, IDs, and slices and optional structs as wholes.
func collectFuzzLeaves(v reflect.Value, out *[]reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.Name == "Version" || f.Type == reflect.TypeFor[kmsg.Tags]() || !f.IsExported() {
				continue
			}
			collectFuzzLeaves(v.Field(i), out)
		}
	case reflect.Slice:
		*out = append(*out, v)
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				collectFuzzLeaves(v.Index(i), out)
			}
		}
	case reflect.Pointer:
		*out = append(*out, v)
		if !v.IsNil() && v.Elem().Kind() == reflect.Struct {
			collectFuzzLeaves(v.Elem(), out)
		}
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.String, reflect.Array:
		*out = append(*out, v)
	}
}

// editFuzzLeaf changes one value and returns the edits it did not read.
func editFuzzLeaf(v reflect.Value, op, arg byte, rest []byte) []byte {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch op % 4 {
		case 0:
			v.SetInt(fuzzInts[int(arg)%len(fuzzInts)])
		case 1:
			v.SetInt(v.Int() + int64(int8(arg)))
		case 2:
			v.SetInt(int64(int8(arg)))
		case 3:
			v.SetInt(-v.Int())
		}
	case reflect.String:
		var s string
		s, rest = fuzzString(v.String(), op, arg, rest)
		v.SetString(s)
	case reflect.Array: // a topic ID
		id := v.Addr().Interface().(*[16]byte)
		switch op % 3 {
		case 0:
			*id = [16]byte{}
		case 1:
			*id = fuzzTopicIDPlaceholder
		case 2:
			id[arg%16] ^= 1 << (op % 8)
		}
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.String {
			if op%5 == 4 {
				v.SetZero()
				break
			}
			var s string
			if !v.IsNil() {
				s = v.Elem().String()
			}
			s, rest = fuzzString(s, op, arg, rest)
			v.Set(reflect.ValueOf(&s))
			break
		}
		if v.IsNil() {
			v.Set(newFuzzElement(v.Type().Elem()).Addr())
		} else {
			v.SetZero()
		}
	case reflect.Slice:
		rest = editFuzzSlice(v, op, arg, rest)
	}
	return rest
}

// fuzzString is s changed by op: a name from fuzzNames, bytes from the
// edits, or s itself cut or doubled.
func fuzzString(s string, op, arg byte, rest []byte) (string, []byte) {
	switch op % 5 {
	case 0:
		return fuzzNames[int(arg)%len(fuzzNames)], rest
	case 1:
		n := min(int(arg)%32, len(rest))
		return string(rest[:n]), rest[n:]
	case 2:
		return s[:len(s)/2], rest
	case 3:
		s += s
	default:
		s += string(rune(arg))
	}
	return s[:min(len(s), maxFuzzString)], rest
}

// editFuzzSlice empties, nils, grows or shrinks a slice; a byte slice
// (records, metadata) also takes bytes from the edits or a flipped byte.
func editFuzzSlice(v reflect.Value, op, arg byte, rest []byte) []byte {
	n := v.Len()
	switch op % 6 {
	case 0:
		v.SetZero()
	case 1:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	case 2: // duplicate an element
		if n > 0 && n < maxFuzzElements {
			v.Set(reflect.Append(v, v.Index(int(arg)%n)))
		}
	case 3: // remove an element
		if n > 0 {
			i := int(arg) % n
			v.Set(reflect.AppendSlice(v.Slice(0, i), v.Slice(i+1, n)))
		}
	case 4: // append a new (default) element
		if n < maxFuzzElements {
			v.Set(reflect.Append(v, newFuzzElement(v.Type().Elem())))
		}
	case 5:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if n > 0 && arg&1 == 0 {
				b := append([]byte(nil), v.Bytes()...)
				b[int(arg/2)%n] ^= 0xff
				v.SetBytes(b)
			} else {
				k := min(int(arg/2)%64, len(rest))
				v.SetBytes(append([]byte(nil), rest[:k]...))
				rest = rest[k:]
			}
		} else if n > 1 { // swap two elements
			i, j := int(arg)%n, int(arg/16)%n
			a, b := reflect.ValueOf(v.Index(i).Interface()), reflect.ValueOf(v.Index(j).Interface())
			v.Index(i).Set(b)
			v.Index(j).Set(a)
		}
	}
	return rest
}

// newFuzzElement is a new value of t, with kmsg's defaults when t has them.
func newFuzzElement(t reflect.Type) reflect.Value {
	p := reflect.New(t)
	if d, ok := p.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return p.Elem()
}

// TestFuzzEditsKeepRequestsDecodable: edits change a request and what they
// make still decodes, at every key and version, so edited inputs get past
// the decoder to the handler.
func TestFuzzEditsKeepRequestsDecodable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, api := range sortedAPIs() {
		for v := api.min; v <= api.max; v++ {
			changed := 0
			for range 20 {
				frame := encodeRequest(fuzzSeedRequest(api.key, v), 7)
				edits := make([]byte, 3*(1+rng.IntN(4))+rng.IntN(8))
				for i := range edits {
					edits[i] = byte(rng.Uint32())
				}
				prefix, req, ok := decodeFrame(frame)
				if !ok {
					t.Fatalf("%s v%d: the seed does not decode", api.key.Name(), v)
				}
				applyFuzzEdits(req, edits)
				edited := req.AppendTo(slices.Clone(prefix))
				if _, _, ok := decodeFrame(edited); !ok {
					t.Errorf("%s v%d: edits % x make a request that does not decode", api.key.Name(), v, edits)
				}
				if !bytes.Equal(edited, frame) {
					changed++
				}
			}
			seed := encodeRequest(fuzzSeedRequest(api.key, v), 7)
			prefix, _, _ := decodeFrame(seed)
			fieldless := len(seed)-len(prefix) <= 1 // no body, or only its tag count
			if changed == 0 && !fieldless {
				t.Errorf("%s v%d: 20 random edits changed nothing", api.key.Name(), v)
			}
		}
	}
}
