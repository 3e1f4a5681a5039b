package serde

import (
	"encoding/hex"
	"errors"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// The layouts below are Kafka Streams' (WindowKeySchema.toBinary,
// SessionKeySchema.toBinary, WindowKeySchema.toStoreKeyBinary), written
// out byte by byte.
func TestWindowedLayouts(t *testing.T) {
	tw := TimeWindowed(String(), 100)
	got, err := tw.Serialize("t", Windowed[string]{Key: "ab", Window: Window{Start: 258, End: 358}})
	if err != nil || hex.EncodeToString(got) != "6162"+"0000000000000102" {
		t.Errorf("time-windowed key: % x %v", got, err)
	}
	back, err := tw.Deserialize("t", got)
	if err != nil || back.Key != "ab" || back.Window != (Window{Start: 258, End: 358}) {
		t.Errorf("time-windowed key read as %+v %v", back, err)
	}

	sw := SessionWindowed(Int32())
	got, err = sw.Serialize("t", Windowed[int32]{Key: 7, Window: Window{Start: 1, End: 2}})
	want := "00000007" + "0000000000000002" + "0000000000000001" // key, end, start
	if err != nil || hex.EncodeToString(got) != want {
		t.Errorf("session key: % x %v, want %s", got, err, want)
	}
	sback, err := sw.Deserialize("t", got)
	if err != nil || sback.Key != 7 || sback.Window != (Window{Start: 1, End: 2}) {
		t.Errorf("session key read as %+v %v", sback, err)
	}

	sk := AppendWindowStoreKey(nil, []byte("k"), 3, -2)
	if hex.EncodeToString(sk) != "6b"+"0000000000000003"+"fffffffe" {
		t.Errorf("window store key: % x", sk)
	}
	key, start, seq, err := SplitWindowStoreKey(sk)
	if err != nil || string(key) != "k" || start != 3 || seq != -2 {
		t.Errorf("window store key split as %q %d %d %v", key, start, seq, err)
	}
}

func TestTimeWindowEnd(t *testing.T) {
	// Kafka's timeWindowForSize: end = start + size, MaxInt64 on overflow.
	w, err := TimeWindowFor(math.MaxInt64-10, 100)
	if err != nil || w.End != math.MaxInt64 {
		t.Errorf("overflowing end: %+v %v", w, err)
	}
	if _, err := TimeWindowFor(-1, 10); !errors.Is(err, ErrInvalidData) {
		t.Errorf("negative start: %v", err)
	}
	for _, size := range []int64{0, -5} {
		data := AppendWindowKey(nil, []byte("k"), 0)
		if _, err := TimeWindowed(String(), size).Deserialize("t", data); err == nil {
			t.Errorf("window size %d accepted", size)
		}
	}
}

func TestWindowedErrors(t *testing.T) {
	tw := TimeWindowed(String(), 10)
	for n := range 8 {
		if _, err := tw.Deserialize("t", make([]byte, n)); !errors.Is(err, ErrInvalidData) {
			t.Errorf("time-windowed key of %d bytes: %v", n, err)
		}
	}
	sw := SessionWindowed(String())
	for n := range 16 {
		if _, err := sw.Deserialize("t", make([]byte, n)); !errors.Is(err, ErrInvalidData) {
			t.Errorf("session key of %d bytes: %v", n, err)
		}
	}
	if _, err := sw.Deserialize("t", AppendSessionKey(nil, nil, Window{Start: 5, End: 4})); !errors.Is(err, ErrInvalidData) {
		t.Errorf("session ending before its start: %v", err)
	}
	if _, err := sw.Deserialize("t", AppendSessionKey(nil, nil, Window{Start: -1, End: 4})); !errors.Is(err, ErrInvalidData) {
		t.Errorf("session starting before 0: %v", err)
	}
	for n := range 12 {
		if _, _, _, err := SplitWindowStoreKey(make([]byte, n)); !errors.Is(err, ErrInvalidData) {
			t.Errorf("window store key of %d bytes: %v", n, err)
		}
	}
	// The inner serde's errors come through.
	if _, err := TimeWindowed(Int32(), 10).Deserialize("t", AppendWindowKey(nil, []byte{1}, 0)); !errors.Is(err, ErrInvalidData) {
		t.Errorf("a 1-byte Int32 key: %v", err)
	}
}

func TestWindowedRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOf(rapid.Byte()).Draw(t, "key")
		start := rapid.Int64Range(0, math.MaxInt64/2).Draw(t, "start")
		size := rapid.Int64Range(1, math.MaxInt64/2).Draw(t, "size")
		seq := rapid.Int32().Draw(t, "seq")

		tw := TimeWindowed(Bytes(), size)
		b, err := tw.Serialize("t", Windowed[[]byte]{Key: key, Window: Window{Start: start}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := tw.Deserialize("t", b)
		if err != nil || string(got.Key) != string(key) || got.Window != (Window{Start: start, End: start + size}) {
			t.Fatalf("time-windowed %x@%d came back as %+v %v", key, start, got, err)
		}

		w := Window{Start: start, End: start + rapid.Int64Range(0, math.MaxInt64/2).Draw(t, "length")}
		sw := SessionWindowed(Bytes())
		b, err = sw.Serialize("t", Windowed[[]byte]{Key: key, Window: w})
		if err != nil {
			t.Fatal(err)
		}
		sgot, err := sw.Deserialize("t", b)
		if err != nil || string(sgot.Key) != string(key) || sgot.Window != w {
			t.Fatalf("session %x %+v came back as %+v %v", key, w, sgot, err)
		}

		k, st, sq, err := SplitWindowStoreKey(AppendWindowStoreKey(nil, key, start, seq))
		if err != nil || string(k) != string(key) || st != start || sq != seq {
			t.Fatalf("store key %x %d %d came back as %x %d %d %v", key, start, seq, k, st, sq, err)
		}
	})
}
