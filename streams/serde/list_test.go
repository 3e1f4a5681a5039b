package serde

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Kafka's ListSerde bytes, written out from ListSerializer's format.
func TestListKafkaBytes(t *testing.T) {
	ints := List(Int32())
	got, err := ints.Serialize("t", []int32{1, 2})
	// constant size: flag 0, no null indexes, count 2, the entries
	if want := "00" + "00000000" + "00000002" + "00000001" + "00000002"; err != nil || hex.EncodeToString(got) != want {
		t.Errorf("List<Integer>: % x %v, want %s", got, err, want)
	}
	strs := List(String())
	got, err = strs.Serialize("t", []string{"a", ""})
	// variable size: flag 1, count 2, each entry after its length
	if want := "01" + "00000002" + "00000001" + "61" + "00000000"; err != nil || hex.EncodeToString(got) != want {
		t.Errorf("List<String>: % x %v, want %s", got, err, want)
	}
	back, err := strs.Deserialize("t", got)
	if err != nil || !slices.Equal(back, []string{"a", ""}) {
		t.Errorf("read back %q %v", back, err)
	}
	// Kafka's ListDeserializer follows the flag, so a fixed-size list may come variable-size.
	if v, err := ints.Deserialize("t", mustHex(t, "01 00000001 00000004 00000007")); err != nil || !slices.Equal(v, []int32{7}) {
		t.Errorf("variable-size List<Integer>: %v %v", v, err)
	}
	if empty, err := ints.Deserialize("t", mustHex(t, "00 00000000 00000000")); err != nil || len(empty) != 0 {
		t.Errorf("empty list: %v %v", empty, err)
	}
}

func TestListErrors(t *testing.T) {
	for name, c := range map[string]struct {
		hex   string
		ints  bool
		match string
	}{
		"empty":               {"", true, "bytes wanted"},
		"strategy flag 2":     {"02 00000000", false, "strategy flag 2"},
		"null index":          {"00 00000001 00000000 00000001 00000005", true, "null entries"},
		"null entry":          {"01 00000001 ffffffff", false, "is null"},
		"negative count":      {"01 ffffff00", false, "negative entry count"},
		"truncated entry":     {"01 00000001 00000005 6162", false, "bytes wanted"},
		"negative entry size": {"01 00000001 fffffffe", false, "-2 bytes wanted"},
		"truncated constant":  {"00 00000000 00000002 00000001 0000", true, "bytes wanted"},
		"count past the end":  {"00 00000000 7fffffff", true, "bytes wanted"},
		"trailing bytes":      {"01 00000000 00", false, "after the last entry"},
		"constant, variable":  {"00 00000000 00000000", false, "fixed-size inner serde"},
	} {
		var err error
		if c.ints {
			_, err = List(Int32()).Deserialize("t", mustHex(t, c.hex))
		} else {
			_, err = List(String()).Deserialize("t", mustHex(t, c.hex))
		}
		if !errors.Is(err, ErrInvalidData) || !contains(err, c.match) {
			t.Errorf("%s: %v, want ErrInvalidData saying %q", name, err, c.match)
		}
	}
}

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

func TestListRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		longs := rapid.SliceOf(rapid.Int64()).Draw(t, "longs")
		b, err := List(Int64()).Serialize("t", longs)
		if err != nil {
			t.Fatal(err)
		}
		back, err := List(Int64()).Deserialize("t", b)
		if err != nil || !slices.Equal(back, longs) {
			t.Fatalf("%v came back as %v %v", longs, back, err)
		}
		strs := rapid.SliceOf(rapid.String()).Draw(t, "strings")
		b, err = List(String()).Serialize("t", strs)
		if err != nil {
			t.Fatal(err)
		}
		sback, err := List(String()).Deserialize("t", b)
		if err != nil || !slices.Equal(sback, strs) {
			t.Fatalf("%q came back as %q %v", strs, sback, err)
		}
	})
}
