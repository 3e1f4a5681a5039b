package record

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression levels (KIP-390) in Kafka's own numbers, as compression.gzip.level,
// compression.lz4.level and compression.zstd.level give them. Level 0 means the codec's
// default, which is also Kafka's default level for each: gzip -1 (deflate's 6), lz4 9
// (Kafka then uses lz4's fast compressor, not the high-compression one), zstd 3.
//
//	gzip  -1 or 1..9, as deflate has them
//	lz4   1..17: Kafka's default 9 is lz4's fast compressor; any other level is the
//	      high-compression one at that level, capped at 9, lz4's highest here
//	zstd  -131072..22, mapped to the four speeds of klauspost/compress (below 3 fastest,
//	      3-5 default, 6-9 better, 10 and up best)
//
// Snappy has no levels.

// Kafka's default levels (compression.*.level defaults).
const (
	DefaultGzipLevel = -1
	DefaultLZ4Level  = 9
	DefaultZstdLevel = 3
)

// CompressLevel is Compress at a compression level (0: the codec's default).
func CompressLevel(codec Codec, level int, dst, src []byte) ([]byte, error) {
	var err error
	switch {
	case level == 0 || codec == CodecNone || codec == CodecSnappy:
		return Compress(codec, dst, src)
	case codec == CodecGzip:
		if level == DefaultGzipLevel {
			return Compress(codec, dst, src)
		}
		dst, err = encodeGzipLevel(dst, src, level)
	case codec == CodecLZ4:
		if level == DefaultLZ4Level {
			return Compress(codec, dst, src)
		}
		dst, err = encodeLZ4Level(dst, src, level)
	case codec == CodecZstd:
		return zstdEncoderAt(zstd.EncoderLevelFromZstd(level)).EncodeAll(src, dst), nil
	default:
		return dst, fmt.Errorf("%w: %s", ErrUnsupportedCodec, codec)
	}
	if err != nil {
		return dst, fmt.Errorf("record: compress %s level %d: %w", codec, level, err)
	}
	return dst, nil
}

// gzipLevelWriters pools gzip writers by level 1..9 (index level-1).
var gzipLevelWriters [9]sync.Pool

func encodeGzipLevel(dst, src []byte, level int) ([]byte, error) {
	if level < 1 || level > 9 {
		return dst, fmt.Errorf("gzip level must be -1 or 1..9")
	}
	pool := &gzipLevelWriters[level-1]
	gw, _ := pool.Get().(*gzipWriter)
	if gw == nil {
		gw = new(gzipWriter)
		w, err := gzip.NewWriterLevel(&gw.out, level)
		if err != nil {
			return dst, err
		}
		gw.w = w
	}
	defer pool.Put(gw)
	gw.out.b = dst
	gw.w.Reset(&gw.out)
	_, err := gw.w.Write(src)
	if err == nil {
		err = gw.w.Close()
	}
	dst, gw.out.b = gw.out.b, nil
	return dst, err
}

var lz4Levels = [9]lz4.CompressionLevel{lz4.Level1, lz4.Level2, lz4.Level3, lz4.Level4, lz4.Level5,
	lz4.Level6, lz4.Level7, lz4.Level8, lz4.Level9}

// lz4LevelWriters pools high-compression lz4 writers by lz4 level 1..9 (index level-1).
var lz4LevelWriters [9]sync.Pool

func encodeLZ4Level(dst, src []byte, level int) ([]byte, error) {
	if level < 1 || level > 17 {
		return dst, fmt.Errorf("lz4 level must be 1..17")
	}
	level = min(level, 9)
	pool := &lz4LevelWriters[level-1]
	lw, _ := pool.Get().(*lz4Writer)
	if lw == nil {
		lw = new(lz4Writer)
		lw.w = lz4.NewWriter(&lw.out)
		err := lw.w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.CompressionLevelOption(lz4Levels[level-1]))
		if err != nil {
			return dst, err
		}
	}
	defer pool.Put(lw)
	lw.out.b = dst
	lw.w.Reset(&lw.out)
	_, err := lw.w.Write(src)
	if err == nil {
		err = lw.w.Close()
	}
	dst, lw.out.b = lw.out.b, nil
	return dst, err
}

// zstdLevelEncoders holds one encoder per speed, made on first use with the options of
// the default encoder.
var zstdLevelEncoders sync.Map // zstd.EncoderLevel -> *zstd.Encoder

func zstdEncoderAt(level zstd.EncoderLevel) *zstd.Encoder {
	if level == zstd.SpeedDefault {
		return zstdEncoder()
	}
	if e, ok := zstdLevelEncoders.Load(level); ok {
		return e.(*zstd.Encoder)
	}
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(0),
		zstd.WithWindowSize(1<<20),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderLevel(level))
	if err != nil {
		panic(fmt.Sprintf("record: zstd encoder options: %v", err))
	}
	got, _ := zstdLevelEncoders.LoadOrStore(level, e)
	return got.(*zstd.Encoder)
}
