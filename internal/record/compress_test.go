package record

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func compressible(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefgh  \n{}"[rng.IntN(13)]
	}
	return b
}

func random(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return b
}

func TestCompressRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty":        {},
		"one byte":     {42},
		"text":         compressible(100_000),
		"random":       random(70_000),
		"zeros 300KiB": make([]byte, 300<<10),
	}
	for _, c := range allCodecs {
		for name, src := range inputs {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				comp, err := Compress(c, []byte("head"), src)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(comp, []byte("head")) {
					t.Fatal("Compress did not append")
				}
				out, err := Decompress(c, comp[4:], []byte("dst"), len(src))
				if err != nil {
					t.Fatalf("Decompress: %v", err)
				}
				if !bytes.Equal(out[3:], src) || string(out[:3]) != "dst" {
					t.Fatalf("round trip differs (len %d, want %d)", len(out)-3, len(src))
				}
				if len(src) > 0 {
					_, err = Decompress(c, comp[4:], nil, len(src)-1)
					if !errors.Is(err, ErrDecompressedTooLarge) {
						t.Fatalf("one byte over maxOut: %v", err)
					}
				}
			})
		}
	}
}

// TestDecompressOtherFramings: streams other encoders write, which Compress
// never produces: xerial snappy from Java, several frames or members,
// zstd without a content size (zstd-jni streams), lz4 with 4 MiB blocks.
func TestDecompressOtherFramings(t *testing.T) {
	src := compressible(200_000)
	half := len(src) / 2
	cat := func(c Codec) []byte {
		a, _ := Compress(c, nil, src[:half])
		b, _ := Compress(c, a, src[half:])
		return b
	}
	zstdStream := func() []byte {
		var buf bytes.Buffer
		w, _ := zstd.NewWriter(&buf)
		w.Write(src)
		w.Close()
		return buf.Bytes()
	}
	lz4Big := func() []byte {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		w.Write(src)
		w.Close()
		return buf.Bytes()
	}
	cases := []struct {
		name  string
		codec Codec
		comp  []byte
	}{
		{"xerial", CodecSnappy, xerialFrame(src, 32<<10)},
		{"xerial one chunk", CodecSnappy, xerialFrame(src, len(src))},
		{"gzip members", CodecGzip, cat(CodecGzip)},
		{"lz4 frames", CodecLZ4, cat(CodecLZ4)},
		{"zstd frames", CodecZstd, cat(CodecZstd)},
		{"zstd stream", CodecZstd, zstdStream()},
		{"lz4 4MiB blocks", CodecLZ4, lz4Big()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Decompress(c.codec, c.comp, nil, len(src))
			if err != nil || !bytes.Equal(out, src) {
				t.Fatalf("err %v, equal %v", err, bytes.Equal(out, src))
			}
			if _, err := Decompress(c.codec, c.comp, nil, len(src)-1); !errors.Is(err, ErrDecompressedTooLarge) {
				t.Fatalf("one byte over maxOut: %v", err)
			}
		})
	}
	empty := xerialFrame(nil, 1)
	if out, err := Decompress(CodecSnappy, empty, nil, 10); err != nil || len(out) != 0 {
		t.Errorf("empty xerial stream: %q %v", out, err)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	src := compressible(50_000)
	for _, c := range allCodecs[1:] {
		comp, err := Compress(c, nil, src)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string][]byte{
			"garbage":   bytes.Repeat([]byte{0xa5, 0x17}, 500),
			"empty":     nil,
			"truncated": comp[:len(comp)-3],
			"half":      comp[:len(comp)/2],
		}
		if c != CodecSnappy { // raw snappy has no checksum to catch a flip
			flipped := append([]byte(nil), comp...)
			flipped[len(flipped)*2/3] ^= 0x10
			cases["flipped"] = flipped
		}
		for name, in := range cases {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				out, err := Decompress(c, in, []byte("keep"), 1<<20)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err %v, want ErrCorrupt", err)
				}
				if string(out) != "keep" {
					t.Errorf("dst changed on error: %d bytes", len(out))
				}
			})
		}
	}
	xerialCases := map[string][]byte{
		"block length past end": append(xerialFrame(nil, 1), 0, 0, 1, 0, 1, 2),
		"partial block length":  append(xerialFrame(nil, 1), 0, 0),
		"bad block":             append(xerialFrame(nil, 1), 0, 0, 0, 2, 0xff, 0xff),
		"block claims too much": append(xerialFrame(nil, 1), 0, 0, 0, 3, 0x80, 0x80, 0x04),
	}
	for name, in := range xerialCases {
		if _, err := Decompress(CodecSnappy, in, nil, 1<<20); !errors.Is(err, ErrCorrupt) {
			t.Errorf("xerial %s: err %v, want ErrCorrupt", name, err)
		}
	}
	for _, c := range []Codec{5, 6, 7, -1} {
		if _, err := Decompress(c, src, nil, 1<<20); !errors.Is(err, ErrUnsupportedCodec) {
			t.Errorf("Decompress codec %d: %v", c, err)
		}
		if _, err := Compress(c, nil, src); !errors.Is(err, ErrUnsupportedCodec) {
			t.Errorf("Compress codec %d: %v", c, err)
		}
	}
}

// TestSnappyStrict: S2's extensions to the snappy format are refused, as
// the Java consumers of the data would refuse them.
func TestSnappyStrict(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef-"), 4000)
	s2block := s2.Encode(nil, src) // uses the repeat-offset extension
	if _, err := s2.Decode(nil, s2block); err != nil {
		t.Fatal(err)
	}
	if _, err := Decompress(CodecSnappy, s2block, nil, len(src)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("S2 block accepted as snappy: %v", err)
	}
}

const (
	bombSize   = 100 << 20
	bombMaxOut = 1 << 20
)

// bombs holds 100 MiB of zeros compressed by each codec, built once.
var bombs = sync.OnceValue(func() map[string][]byte {
	zeros := make([]byte, bombSize)
	m := map[string][]byte{}
	for _, c := range allCodecs[1:] {
		m[c.String()], _ = Compress(c, nil, zeros)
	}
	m["xerial"] = xerialFrame(zeros, 32<<10)
	var buf bytes.Buffer
	w, _ := zstd.NewWriter(&buf) // no content size in a stream
	w.Write(zeros)
	w.Close()
	m["zstd-stream"] = buf.Bytes()
	return m
})

// TestDecompressionBomb: 100 MiB of zeros with a 1 MiB bound is refused
// having allocated little more than the bound.
func TestDecompressionBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 100 MiB per codec")
	}
	codecs := map[string]Codec{"gzip": CodecGzip, "snappy": CodecSnappy, "xerial": CodecSnappy,
		"lz4": CodecLZ4, "zstd": CodecZstd, "zstd-stream": CodecZstd}
	for name, comp := range bombs() {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Decompress(codecs[name], comp, nil, bombMaxOut)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrDecompressedTooLarge) || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err %v, want ErrDecompressedTooLarge", err)
			}
			// The zstd stream declares an 8 MiB window, which the
			// decoder is allowed to fill (growing its output by
			// doubling); everything else stops at 1 MiB.
			limit := uint64(8 << 20)
			if name == "zstd-stream" {
				limit = 64 << 20
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
				t.Errorf("allocated %d MiB to refuse the bomb", alloc>>20)
			}
		})
	}
}

// TestValidateBomb: a batch whose records decompress to 100 MiB is refused
// by Validate and Iterate.
func TestValidateBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 100 MiB")
	}
	base := build(t, producerBatch(CodecNone, 1))
	for _, c := range []Codec{CodecGzip, CodecLZ4, CodecZstd} {
		batch := rewrap(base, c, bombs()[c.String()])
		_, err := Validate(batch, ValidateConfig{MaxDecompressedBytes: bombMaxOut})
		if !errors.Is(err, ErrDecompressedTooLarge) {
			t.Errorf("%s Validate: %v", c, err)
		}
		err = Iterate(batch, bombMaxOut, func(*Record) bool { return true })
		if !errors.Is(err, ErrDecompressedTooLarge) {
			t.Errorf("%s Iterate: %v", c, err)
		}
	}
}
