package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec instances are pooled: a gzip or lz4 reader costs tens of kilobytes
// to set up, which would otherwise be paid once per produced batch.
var (
	gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}
	gzipWriters = sync.Pool{New: func() any {
		w := new(gzipWriter)
		w.w, _ = gzip.NewWriterLevel(&w.out, gzip.DefaultCompression)
		return w
	}}
	lz4Readers = sync.Pool{New: func() any {
		r := new(lz4Reader)
		r.r = lz4.NewReader(&r.src)
		return r
	}}
	lz4Writers = sync.Pool{New: func() any {
		w := new(lz4Writer)
		w.w = lz4.NewWriter(&w.out)
		// 64 KiB blocks, as the Java producer writes: readers then need
		// 64 KiB buffers, not the library's 4 MiB default.
		if err := w.w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			panic(fmt.Sprintf("record: lz4 options: %v", err))
		}
		return w
	}}
)

// A zstd encoder is safe for concurrent EncodeAll and pools its own
// state, so one serves the process.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(0),
		// A 1 MiB window keeps the consumers' decoder memory small;
		// batches are rarely larger.
		zstd.WithWindowSize(1<<20),
		zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("record: zstd encoder options: %v", err))
	}
	return e
})

// Output buffers for Validate and Iterate. Buffers that grew past
// maxPooledBuffer are dropped so one huge batch does not pin its memory.
const maxPooledBuffer = 4 << 20

var buffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 64<<10)
	return &b
}}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if b == nil || cap(*b) > maxPooledBuffer {
		return
	}
	*b = (*b)[:0]
	buffers.Put(b)
}

// Decompress appends the decompression of src to dst and returns the
// extended slice. At most maxOut bytes are appended: more is refused with
// ErrDecompressedTooLarge, found while decoding so a bomb costs no more
// than maxOut of memory. Malformed input gives ErrCorrupt; codec 5..7
// ErrUnsupportedCodec. Snappy accepts raw blocks and the xerial framing
// of the Java client.
func Decompress(codec Codec, src, dst []byte, maxOut int) ([]byte, error) {
	maxOut = max(maxOut, 0)
	if len(src) == 0 && codec != CodecNone {
		// Every codec frames even empty input; nothing at all is a
		// records section that was lost (lz4 would read it as empty).
		return dst, fmt.Errorf("record: decompress %s: %w: no compressed bytes", codec, ErrCorrupt)
	}
	var out []byte
	var err error
	switch codec {
	case CodecNone:
		if len(src) > maxOut {
			return dst, fmt.Errorf("%w: %d bytes, limit %d", ErrDecompressedTooLarge, len(src), maxOut)
		}
		return append(dst, src...), nil
	case CodecGzip:
		out, err = decodeGzip(src, dst, maxOut)
	case CodecSnappy:
		out, err = decodeSnappy(src, dst, maxOut)
	case CodecLZ4:
		out, err = decodeLZ4(src, dst, maxOut)
	case CodecZstd:
		out, err = decodeZstd(src, dst, maxOut)
	default:
		return dst, fmt.Errorf("%w: %s", ErrUnsupportedCodec, codec)
	}
	if err != nil {
		return dst, fmt.Errorf("record: decompress %s: %w", codec, err)
	}
	return out, nil
}

// Compress appends the compression of src to dst. Snappy is written as a
// raw block, as franz-go and librdkafka write it; every Kafka client reads it.
func Compress(codec Codec, dst, src []byte) ([]byte, error) {
	var err error
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		dst, err = encodeGzip(dst, src)
	case CodecSnappy:
		dst, err = encodeSnappy(dst, src)
	case CodecLZ4:
		dst, err = encodeLZ4(dst, src)
	case CodecZstd:
		return zstdEncoder().EncodeAll(src, dst), nil
	default:
		return dst, fmt.Errorf("%w: %s", ErrUnsupportedCodec, codec)
	}
	if err != nil {
		return dst, fmt.Errorf("record: compress %s: %w", codec, err)
	}
	return dst, nil
}

// corrupt marks a codec library's error as ErrCorrupt without making the
// library's own error values part of this package's API.
func corrupt(err error) error { return fmt.Errorf("%w: %v", ErrCorrupt, err) }

func tooLarge(maxOut int) error {
	return fmt.Errorf("%w: more than %d bytes", ErrDecompressedTooLarge, maxOut)
}

// appendWriter is an io.Writer appending to a caller's slice, so encoders
// write straight into the destination batch.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// readBounded appends everything r yields to dst, refusing to go past
// maxOut appended bytes. probe is a one-byte buffer owned by the caller's
// pooled reader: one on the stack would escape through r.Read.
func readBounded(r io.Reader, dst []byte, maxOut int, probe []byte) ([]byte, error) {
	start := len(dst)
	for stalls := 0; stalls < 100; {
		room := min(cap(dst)-len(dst), maxOut-(len(dst)-start))
		if room <= 0 {
			// The buffer is full or the limit reached: a one-byte probe
			// tells the end of the stream from more data without growing
			// the buffer for nothing.
			n, err := r.Read(probe[:1])
			if n > 0 {
				if len(dst)-start >= maxOut {
					return dst, tooLarge(maxOut)
				}
				dst = append(dst, probe[0])
			}
			if done, err := endOfRead(err); done {
				return dst, err
			}
			stalls = nextStall(stalls, n)
			continue
		}
		n, err := r.Read(dst[len(dst) : len(dst)+room])
		dst = dst[:len(dst)+n]
		if done, err := endOfRead(err); done {
			return dst, err
		}
		stalls = nextStall(stalls, n)
	}
	return dst, corrupt(io.ErrNoProgress)
}

func endOfRead(err error) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, io.EOF):
		return true, nil
	}
	return true, corrupt(err)
}

// nextStall counts consecutive empty reads, so a reader that never makes
// progress cannot spin forever.
func nextStall(stalls, n int) int {
	if n > 0 {
		return 0
	}
	return stalls + 1
}

// Largest output per input byte each format can produce; a size header
// claiming more is corrupt and must not size an allocation.
const (
	deflateMaxRatio = 1032
	snappyMaxRatio  = 22 // a 3-byte copy yields at most 64 bytes
)

type gzipReader struct {
	r     gzip.Reader
	src   bytes.Reader
	probe [1]byte
}

func decodeGzip(src, dst []byte, maxOut int) ([]byte, error) {
	gr := gzipReaders.Get().(*gzipReader)
	defer gzipReaders.Put(gr)
	gr.src.Reset(src)
	if err := gr.r.Reset(&gr.src); err != nil {
		return dst, corrupt(err)
	}
	if len(src) >= 18 {
		// The trailer holds the input size mod 2^32: a hint to size the
		// output once. Deflate cannot expand more than 1032:1, so a larger
		// claim is a lie meant to make us allocate; so is one past maxOut.
		hint := int(binary.LittleEndian.Uint32(src[len(src)-4:]))
		if hint <= maxOut && hint <= deflateMaxRatio*len(src) {
			dst = slices.Grow(dst, hint)
		}
	}
	out, err := readBounded(&gr.r, dst, maxOut, gr.probe[:])
	gr.src.Reset(nil)
	return out, err
}

type gzipWriter struct {
	w   *gzip.Writer
	out appendWriter
}

func encodeGzip(dst, src []byte) ([]byte, error) {
	gw := gzipWriters.Get().(*gzipWriter)
	defer gzipWriters.Put(gw)
	gw.out.b = dst
	gw.w.Reset(&gw.out)
	_, err := gw.w.Write(src)
	if err == nil {
		err = gw.w.Close()
	}
	dst, gw.out.b = gw.out.b, nil
	return dst, err
}

type lz4Reader struct {
	r     *lz4.Reader
	src   bytes.Reader
	probe [1]byte
}

func decodeLZ4(src, dst []byte, maxOut int) ([]byte, error) {
	lr := lz4Readers.Get().(*lz4Reader)
	defer lz4Readers.Put(lr)
	lr.src.Reset(src)
	lr.r.Reset(&lr.src)
	out, err := readBounded(lr.r, dst, maxOut, lr.probe[:])
	lr.src.Reset(nil)
	return out, err
}

type lz4Writer struct {
	w   *lz4.Writer
	out appendWriter
}

func encodeLZ4(dst, src []byte) ([]byte, error) {
	lw := lz4Writers.Get().(*lz4Writer)
	defer lz4Writers.Put(lw)
	lw.out.b = dst
	lw.w.Reset(&lw.out)
	_, err := lw.w.Write(src)
	if err == nil {
		err = lw.w.Close()
	}
	dst, lw.out.b = lw.out.b, nil
	return dst, err
}

func encodeSnappy(dst, src []byte) ([]byte, error) {
	n := s2.MaxEncodedLen(len(src))
	if n < 0 {
		return dst, fmt.Errorf("%d bytes is more than a snappy block holds", len(src))
	}
	dst = slices.Grow(dst, n)
	out := s2.EncodeSnappy(dst[len(dst):len(dst)+n], src)
	return dst[:len(dst)+len(out)], nil
}

// xerialMagic opens the framing snappy-java's SnappyOutputStream writes:
// the magic, a version and a compatible version (int32 each), then blocks
// of [int32 length][raw snappy block].
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderSize = 16

func decodeSnappy(src, dst []byte, maxOut int) ([]byte, error) {
	if len(src) >= xerialHeaderSize && bytes.HasPrefix(src, xerialMagic) {
		return decodeXerial(src[xerialHeaderSize:], dst, maxOut)
	}
	return decodeSnappyBlock(src, dst, maxOut)
}

func decodeXerial(src, dst []byte, maxOut int) ([]byte, error) {
	start := len(dst)
	for len(src) > 0 {
		if len(src) < 4 {
			return dst, corrupt(fmt.Errorf("xerial: %d trailing bytes", len(src)))
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst, corrupt(fmt.Errorf("xerial: block of %d bytes, %d left", n, len(src)))
		}
		var err error
		dst, err = decodeSnappyBlock(src[:n], dst, maxOut-(len(dst)-start))
		if err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return dst, nil
}

// decodeSnappyBlock decodes one raw block with the strict snappy decoder:
// s2.Decode would also accept S2 extensions that the Java consumers of
// this data could not decode.
func decodeSnappyBlock(src, dst []byte, maxOut int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, corrupt(err)
	}
	if n > maxOut {
		return dst, tooLarge(maxOut)
	}
	if n > snappyMaxRatio*len(src) {
		return dst, corrupt(fmt.Errorf("snappy: %d bytes claimed from %d", n, len(src)))
	}
	dst = slices.Grow(dst, n)
	if _, err := snappy.DecodeStrict(dst[len(dst):len(dst)+n], src); err != nil {
		return dst, corrupt(err)
	}
	return dst[:len(dst)+n], nil
}

// zstdMaxWindow is the largest window a frame may declare beyond the
// caller's bound: the 8 MiB the zstd format asks every decoder to support.
const zstdMaxWindow = 8 << 20

// zstdDecoder is a pooled DecodeAll-only decoder (DecodeAll writes into
// the output slice: no window ring, no goroutines) and the output limit it
// was configured with.
type zstdDecoder struct {
	d     *zstd.Decoder
	limit int
}

var zstdDecoders sync.Pool

// getZstdDecoder returns a decoder refusing to produce more than limit
// bytes. The limit lives in the decoder's options, so it is reset only
// when it changes; callers tend to pass the same bound every time.
func getZstdDecoder(limit int) (*zstdDecoder, error) {
	zd, _ := zstdDecoders.Get().(*zstdDecoder)
	if zd == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(limit)))
		if err != nil {
			return nil, err
		}
		return &zstdDecoder{d: d, limit: limit}, nil
	}
	if zd.limit != limit {
		if err := zd.d.ResetWithOptions(nil, zstd.WithDecoderMaxMemory(uint64(limit))); err != nil {
			return nil, err
		}
		zd.limit = limit
	}
	return zd, nil
}

// decodeZstd decodes with the decoder's own size limit, which it checks
// after every block, so a bomb stops within a block of the limit. The
// library also refuses windows above that limit even though DecodeAll
// needs no window buffer, so the limit is raised to the frame's window
// (up to zstdMaxWindow) and the output checked against maxOut after.
func decodeZstd(src, dst []byte, maxOut int) ([]byte, error) {
	var fh zstd.Header
	if err := fh.Decode(src); err != nil {
		return dst, corrupt(err)
	}
	if fh.HasFCS && fh.FrameContentSize > uint64(maxOut) {
		return dst, tooLarge(maxOut)
	}
	// The library counts the bytes already in dst against its limit when
	// the frame states its size, so they are added to it; and it treats
	// every window as at least zstd.MinWindowSize.
	limit := max(maxOut+len(dst), zstd.MinWindowSize, int(min(fh.WindowSize, zstdMaxWindow)))
	if fh.WindowSize > uint64(limit) {
		return dst, tooLarge(maxOut)
	}
	zd, err := getZstdDecoder(limit)
	if err != nil {
		return dst, corrupt(err)
	}
	defer zstdDecoders.Put(zd)
	start := len(dst)
	out, err := zd.d.DecodeAll(src, dst)
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return dst[:start], tooLarge(maxOut)
	case err != nil:
		return dst[:start], corrupt(err)
	case len(out)-start > maxOut:
		return dst[:start], tooLarge(maxOut)
	}
	return out, nil
}
