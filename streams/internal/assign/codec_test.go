package assign

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

func TestTaskIDString(t *testing.T) {
	cases := []struct {
		id   TaskID
		text string
	}{
		{TaskID{0, 1}, "0_1"},
		{TaskID{12, 0}, "12_0"},
		{TaskID{2147483647, 2147483647}, "2147483647_2147483647"},
	}
	for _, tc := range cases {
		if got := tc.id.String(); got != tc.text {
			t.Errorf("%#v.String() = %q, want %q", tc.id, got, tc.text)
		}
		back, err := ParseTaskID(tc.text)
		if err != nil || back != tc.id {
			t.Errorf("ParseTaskID(%q) = %v, %v; want %v", tc.text, back, err, tc.id)
		}
	}
}

func TestParseTaskIDRejects(t *testing.T) {
	for _, s := range []string{"", "0", "0_", "_1", "a_1", "0_b", "-1_0", "0_-1", "+1_0", "0_1_2", "0_2147483648", " 0_1"} {
		if id, err := ParseTaskID(s); err == nil {
			t.Errorf("ParseTaskID(%q) = %v, want an error", s, id)
		}
	}
}

var genTask = rapid.Custom(func(t *rapid.T) TaskID {
	return TaskID{rapid.Int32Min(0).Draw(t, "sub"), rapid.Int32Min(0).Draw(t, "part")}
})

func genTasks(t *rapid.T, label string) []TaskID {
	ts := rapid.SliceOfNDistinct(genTask, 0, 10, func(id TaskID) TaskID { return id }).Draw(t, label)
	return sortedTasks(ts)
}

func genHosts(t *rapid.T, label string) map[string][]TopicPartition {
	out := map[string][]TopicPartition{}
	for _, e := range rapid.SliceOfN(rapid.StringMatching(`[a-z]{1,8}:[0-9]{1,5}`), 0, 4).Draw(t, label) {
		var tps []TopicPartition
		for _, topic := range rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z.-]{1,12}`), 0, 3, rapid.ID[string]).Draw(t, "topics") {
			for _, p := range rapid.SliceOfNDistinct(rapid.Int32Min(0), 1, 4, rapid.ID[int32]).Draw(t, "partitions") {
				tps = append(tps, TopicPartition{topic, p})
			}
		}
		out[e] = tps
	}
	return out
}

func TestSubscriptionRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Subscription{
			LatestSupportedVersion: UserDataVersion,
			ProcessID:              rapid.StringN(1, 40, -1).Draw(t, "process"),
			Endpoint:               rapid.StringN(0, 30, -1).Draw(t, "endpoint"),
			PrevActive:             genTasks(t, "active"),
			PrevStandby:            genTasks(t, "standby"),
			OffsetSums:             rapid.MapOfN(genTask, rapid.Int64Min(-2), 0, 10).Draw(t, "sums"),
		}
		b, err := EncodeSubscription(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeSubscription(b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-in +out):\n%s", diff)
		}
		checkPrefixesRejected(t, b, func(b []byte) error { _, err := DecodeSubscription(b); return err })
	})
}

func TestAssignmentRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := MemberUserData{
			LatestSupportedVersion: UserDataVersion,
			ErrorCode:              AssignmentError(rapid.Int32Range(0, 4).Draw(t, "code")),
			Active:                 genTasks(t, "active"),
			Standby:                genTasks(t, "standby"),
			ActiveHosts:            genHosts(t, "activeHosts"),
			StandbyHosts:           genHosts(t, "standbyHosts"),
		}
		b, err := EncodeAssignment(a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeAssignment(b)
		if err != nil {
			t.Fatal(err)
		}
		sortTPs := cmpopts.SortSlices(func(x, y TopicPartition) bool { return x.compare(y) < 0 })
		if diff := cmp.Diff(a, got, cmpopts.EquateEmpty(), sortTPs); diff != "" {
			t.Fatalf("round trip (-in +out):\n%s", diff)
		}
		checkPrefixesRejected(t, b, func(b []byte) error { _, err := DecodeAssignment(b); return err })
	})
}

// checkPrefixesRejected: every strict prefix of an encoding fails to
// decode, and so does the encoding with a byte appended.
func checkPrefixesRejected(t *rapid.T, b []byte, decode func([]byte) error) {
	for n := range len(b) {
		if err := decode(b[:n]); err == nil {
			t.Fatalf("a %d-byte prefix of %d bytes decoded", n, len(b))
		}
	}
	if err := decode(append(b[:len(b):len(b)], 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Fatalf("a trailing byte: err = %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	valid, err := EncodeSubscription(Subscription{ProcessID: "p", PrevActive: tasks("0_1")})
	if err != nil {
		t.Fatal(err)
	}
	withVersion := func(v int32) []byte {
		b := append([]byte{}, valid...)
		binary.BigEndian.PutUint32(b, uint32(v))
		return b
	}
	// The previous-active count sits after version (4), latest (4),
	// process ID (2+1) and endpoint (2).
	withActiveCount := func(n int32) []byte {
		b := append([]byte{}, valid...)
		binary.BigEndian.PutUint32(b[13:], uint32(n))
		return b
	}
	withTask := func(sub int32) []byte {
		b := append([]byte{}, valid...)
		binary.BigEndian.PutUint32(b[17:], uint32(sub))
		return b
	}
	cases := []struct {
		name   string
		data   []byte
		wantIs error
		want   string
	}{
		{"empty", nil, ErrTruncated, ""},
		{"version 2", withVersion(2), ErrUnknownVersion, "version 2"},
		{"version 0", withVersion(0), ErrUnknownVersion, "version 0"},
		{"huge count", withActiveCount(1 << 30), ErrTruncated, ""},
		{"negative count", withActiveCount(-1), nil, "negative array length"},
		{"negative task", withTask(-3), nil, "negative task id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSubscription(tc.data)
			if err == nil {
				t.Fatal("decoded")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err = %v, want %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q in it", err, tc.want)
			}
		})
	}
	// An assignment of a newer version is refused too.
	a, err := EncodeAssignment(MemberUserData{})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(a, 7)
	if _, err := DecodeAssignment(a); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("assignment version 7: err = %v", err)
	}
}

func TestEncodeRejectsLongStrings(t *testing.T) {
	if _, err := EncodeSubscription(Subscription{ProcessID: strings.Repeat("x", 1<<15)}); err == nil {
		t.Fatal("a 32768-byte process ID encoded")
	}
}

func FuzzDecodeSubscription(f *testing.F) {
	b, _ := EncodeSubscription(Subscription{ProcessID: "p", Endpoint: "h:1", PrevActive: tasks("0_1"), OffsetSums: map[TaskID]int64{{1, 2}: 3}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSubscription(data)
		if err != nil {
			return
		}
		again, err := EncodeSubscription(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeSubscription(again); err != nil {
			t.Fatalf("re-encoded subscription does not decode: %v", err)
		}
	})
}

func FuzzDecodeAssignment(f *testing.F) {
	b, _ := EncodeAssignment(MemberUserData{Active: tasks("0_1"), ActiveHosts: map[string][]TopicPartition{"h:1": {{"t", 0}}}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeAssignment(data)
		if err != nil {
			return
		}
		if _, err := EncodeAssignment(a); err != nil {
			t.Fatal(err)
		}
	})
}

// A corrupt array length is checked against the bytes left before
// anything is allocated for it.
func TestDecodeHugeCountAllocatesLittle(t *testing.T) {
	b, err := EncodeSubscription(Subscription{ProcessID: "p", PrevActive: tasks("0_1")})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[13:], 1<<28)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := DecodeSubscription(b); !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v", err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("decoding a count of 2^28 allocated %d bytes", n)
	}
}
