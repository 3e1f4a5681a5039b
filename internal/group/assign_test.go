package group

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// topicID names test topics: byte 0 is the letter.
func topicID(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	return id
}

// assignFixture builds an assignInput from "member:topic,topic" specs and
// "topic:partitions" topics, with previous assignments in "t-0 t-1" form.
type assignFixture struct {
	topics   map[string]int32
	members  []string // "m1:t,u"
	previous map[string]string
}

func (f assignFixture) input() *assignInput {
	in := &assignInput{topics: make(map[[16]byte]topicMeta)}
	for name, n := range f.topics {
		in.topics[topicID(name)] = topicMeta{name: name, partitions: n}
	}
	for _, spec := range f.members {
		id, topics, _ := strings.Cut(spec, ":")
		m := assignMember{id: id, previous: parsePartitions(f.previous[id])}
		for _, t := range strings.Split(topics, ",") {
			if _, ok := f.topics[t]; ok {
				m.subscribed = append(m.subscribed, topicID(t))
			}
		}
		in.members = append(in.members, m)
	}
	slices.SortFunc(in.members, func(a, b assignMember) int { return strings.Compare(a.id, b.id) })
	return in
}

func parsePartitions(s string) topicPartitions {
	var tps []tpID
	for _, f := range strings.Fields(s) {
		i := strings.LastIndexByte(f, '-')
		p, _ := strconv.Atoi(f[i+1:])
		tps = append(tps, tpID{topicID(f[:i]), int32(p)})
	}
	return partitionsOf(tps)
}

func formatTestPartitions(tps topicPartitions) string {
	var parts []string
	tps.each(func(tp tpID) {
		parts = append(parts, fmt.Sprintf("%s-%d", strings.TrimRight(string(tp.topic[:]), "\x00"), tp.partition))
	})
	return strings.Join(parts, " ")
}

func TestRangeAssignor(t *testing.T) {
	cases := []struct {
		name string
		f    assignFixture
		want map[string]string
	}{
		{
			name: "contiguous ranges, the first members one more",
			f:    assignFixture{topics: map[string]int32{"t": 7}, members: []string{"c:t", "a:t", "b:t"}},
			want: map[string]string{"a": "t-0 t-1 t-2", "b": "t-3 t-4", "c": "t-5 t-6"},
		},
		{
			name: "co-partitioned topics get the same numbers",
			f:    assignFixture{topics: map[string]int32{"t": 4, "u": 4}, members: []string{"a:t,u", "b:t,u"}},
			want: map[string]string{"a": "t-0 t-1 u-0 u-1", "b": "t-2 t-3 u-2 u-3"},
		},
		{
			name: "per topic, among its subscribers",
			f:    assignFixture{topics: map[string]int32{"t": 2, "u": 3}, members: []string{"a:t", "b:t,u", "c:u"}},
			want: map[string]string{"a": "t-0", "b": "t-1 u-0 u-1", "c": "u-2"},
		},
		{
			name: "more members than partitions",
			f:    assignFixture{topics: map[string]int32{"t": 2}, members: []string{"a:t", "b:t", "c:t"}},
			want: map[string]string{"a": "t-0", "b": "t-1", "c": ""},
		},
		{
			name: "unknown topics are ignored",
			f:    assignFixture{topics: map[string]int32{"t": 1}, members: []string{"a:t,nope"}},
			want: map[string]string{"a": "t-0"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := rangeAssignor{}.assign(c.f.input())
			checkAssignment(t, got, c.want)
		})
	}
}

func TestUniformAssignor(t *testing.T) {
	cases := []struct {
		name string
		f    assignFixture
		want map[string]string
	}{
		{
			name: "fresh: spread round-robin over the members",
			f:    assignFixture{topics: map[string]int32{"t": 5, "u": 2}, members: []string{"a:t,u", "b:t,u", "c:t,u"}},
			want: map[string]string{"a": "t-0 t-3 u-1", "b": "t-1 t-4", "c": "t-2 u-0"},
		},
		{
			name: "a new member takes from the most loaded only",
			f: assignFixture{topics: map[string]int32{"t": 6}, members: []string{"a:t", "b:t", "c:t"},
				previous: map[string]string{"a": "t-0 t-1 t-2", "b": "t-3 t-4 t-5"}},
			want: map[string]string{"a": "t-0 t-1", "b": "t-3 t-4", "c": "t-2 t-5"},
		},
		{
			name: "a member leaving: the others keep theirs and share its partitions",
			f: assignFixture{topics: map[string]int32{"t": 6}, members: []string{"a:t", "c:t"},
				previous: map[string]string{"a": "t-0 t-1", "b": "t-2 t-3", "c": "t-4 t-5"}},
			want: map[string]string{"a": "t-0 t-1 t-2", "c": "t-3 t-4 t-5"},
		},
		{
			name: "unsubscribed and deleted partitions are dropped",
			f: assignFixture{topics: map[string]int32{"t": 2, "u": 2}, members: []string{"a:t", "b:t,u"},
				previous: map[string]string{"a": "t-0 u-0 t-9", "b": "t-1"}},
			want: map[string]string{"a": "t-0 t-1", "b": "u-0 u-1"},
		},
		{
			name: "a partition claimed twice goes to the first member",
			f: assignFixture{topics: map[string]int32{"t": 2}, members: []string{"a:t", "b:t"},
				previous: map[string]string{"a": "t-0", "b": "t-0"}},
			want: map[string]string{"a": "t-0", "b": "t-1"},
		},
		{
			name: "heterogeneous: the topic only one member reads stays with it",
			f:    assignFixture{topics: map[string]int32{"t": 4, "u": 2}, members: []string{"a:t", "b:t,u"}},
			want: map[string]string{"a": "t-0 t-1 t-2", "b": "t-3 u-0 u-1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := uniformAssignor{}.assign(c.f.input())
			checkAssignment(t, got, c.want)
		})
	}
}

func checkAssignment(t *testing.T, got map[string]topicPartitions, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d members, want %d", len(got), len(want))
	}
	for id, w := range want {
		if g := formatTestPartitions(got[id]); g != w {
			t.Errorf("%s: got %q, want %q", id, g, w)
		}
	}
}

// genAssignInput draws members subscribing to topics, each with a
// previous assignment that may be stale (deleted partitions, topics no
// longer subscribed, partitions claimed twice).
func genAssignInput(t *rapid.T, homogeneous bool) *assignInput {
	in := &assignInput{topics: make(map[[16]byte]topicMeta)}
	names := []string{"a", "b", "c", "d"}[:rapid.IntRange(1, 4).Draw(t, "topics")]
	for _, name := range names {
		in.topics[topicID(name)] = topicMeta{name: name, partitions: int32(rapid.IntRange(1, 12).Draw(t, "partitions"))}
	}
	n := rapid.IntRange(1, 8).Draw(t, "members")
	for i := range n {
		m := assignMember{id: fmt.Sprintf("m%02d", i)}
		for _, name := range names {
			if homogeneous || rapid.Bool().Draw(t, "subscribes") {
				m.subscribed = append(m.subscribed, topicID(name))
			}
		}
		var prev []tpID
		for range rapid.IntRange(0, 6).Draw(t, "previous") {
			name := rapid.SampledFrom(names).Draw(t, "prevTopic")
			prev = append(prev, tpID{topicID(name), int32(rapid.IntRange(0, 14).Draw(t, "prevPartition"))})
		}
		m.previous = partitionsOf(prev)
		in.members = append(in.members, m)
	}
	return in
}

// checkValid: every partition of a subscribed topic is assigned to exactly
// one member subscribing to it, and nothing else is assigned.
func checkValid(t *rapid.T, in *assignInput, out map[string]topicPartitions) {
	owner := make(map[tpID]string)
	for _, m := range in.members {
		out[m.id].each(func(tp tpID) {
			if prev, ok := owner[tp]; ok {
				t.Fatalf("%v assigned to %s and %s", tp, prev, m.id)
			}
			owner[tp] = m.id
			meta, ok := in.topics[tp.topic]
			if !ok || tp.partition >= meta.partitions || !slices.Contains(m.subscribed, tp.topic) {
				t.Fatalf("%s got %v, which it cannot have", m.id, tp)
			}
		})
	}
	for id, meta := range in.topics {
		subscribed := slices.ContainsFunc(in.members, func(m assignMember) bool { return slices.Contains(m.subscribed, id) })
		for p := range meta.partitions {
			if _, ok := owner[tpID{id, p}]; ok != subscribed {
				t.Fatalf("%s-%d: assigned=%v, subscribed=%v", meta.name, p, ok, subscribed)
			}
		}
	}
}

func counts(out map[string]topicPartitions) (lo, hi int) {
	lo = -1
	for _, tps := range out {
		n := tps.count()
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return lo, hi
}

// The uniform assignor's properties: valid; balanced within one partition
// when all members subscribe to the same topics, and for any subscriptions
// no member has a partition that a member with two fewer could take;
// sticky: a member keeps min(its valid previous partitions, its share).
func TestUniformAssignorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		homogeneous := rapid.Bool().Draw(t, "homogeneous")
		in := genAssignInput(t, homogeneous)
		out := uniformAssignor{}.assign(in)
		checkValid(t, in, out)
		if homogeneous {
			if lo, hi := counts(out); hi-lo > 1 {
				t.Fatalf("unbalanced: %d..%d", lo, hi)
			}
		}
		n := make(map[string]int)
		for id, tps := range out {
			n[id] = tps.count()
		}
		for _, m := range in.members {
			out[m.id].each(func(tp tpID) {
				for _, o := range in.members {
					if slices.Contains(o.subscribed, tp.topic) && n[o.id] < n[m.id]-1 {
						t.Fatalf("%s has %d partitions and %v, which %s with %d could take", m.id, n[m.id], tp, o.id, n[o.id])
					}
				}
			})
		}
		if homogeneous {
			checkSticky(t, in, out)
		}
		// Deterministic.
		if again := (uniformAssignor{}).assign(in); !sameAssignment(out, again) {
			t.Fatalf("two runs differ")
		}
	})
}

// checkSticky: with every member subscribing to everything, a member keeps
// every valid previous partition up to the number it ends with, and the
// members above their share only lose what balance needs.
func checkSticky(t *rapid.T, in *assignInput, out map[string]topicPartitions) {
	claimed := make(map[tpID]bool)
	for _, m := range in.members {
		kept, valid := 0, 0
		m.previous.each(func(tp tpID) {
			meta, ok := in.topics[tp.topic]
			if !ok || tp.partition >= meta.partitions || claimed[tp] {
				return
			}
			claimed[tp] = true
			valid++
			if out[m.id].has(tp.topic, tp.partition) {
				kept++
			}
		})
		if want := min(valid, out[m.id].count()); kept < want {
			t.Fatalf("%s kept %d of its %d valid partitions, ending with %d", m.id, kept, valid, out[m.id].count())
		}
	}
}

// Adding a member to a balanced group moves only what the newcomer
// takes; removing one moves only what it had.
func TestUniformAssignorMovesLittle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genAssignInput(t, true)
		for i := range in.members {
			in.members[i].previous = nil
		}
		first := uniformAssignor{}.assign(in)
		for i := range in.members {
			in.members[i].previous = first[in.members[i].id]
		}
		grown := *in
		grown.members = append(slices.Clone(in.members), assignMember{id: "zz", subscribed: in.members[0].subscribed})
		second := uniformAssignor{}.assign(&grown)
		if moved := movedPartitions(first, second); moved != second["zz"].count() {
			t.Fatalf("a new member took %d partitions but %d moved", second["zz"].count(), moved)
		}
		if len(in.members) > 1 {
			shrunk := *in
			shrunk.members = in.members[1:]
			third := uniformAssignor{}.assign(&shrunk)
			if moved := movedPartitions(first, third); moved != first[in.members[0].id].count() {
				t.Fatalf("a leaving member had %d partitions but %d moved", first[in.members[0].id].count(), moved)
			}
		}
	})
}

// movedPartitions counts the partitions of before that changed owner or
// lost it in after.
func movedPartitions(before, after map[string]topicPartitions) int {
	moved := 0
	for id, tps := range before {
		tps.each(func(tp tpID) {
			if !after[id].has(tp.topic, tp.partition) {
				moved++
			}
		})
	}
	return moved
}

func sameAssignment(a, b map[string]topicPartitions) bool {
	if len(a) != len(b) {
		return false
	}
	for id, tps := range a {
		if !tps.equal(b[id]) {
			return false
		}
	}
	return true
}

// The range assignor's properties: valid, and per topic the subscribers in
// member ID order get contiguous ranges whose sizes differ by at most one,
// larger first.
func TestRangeAssignorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genAssignInput(t, rapid.Bool().Draw(t, "homogeneous"))
		out := rangeAssignor{}.assign(in)
		checkValid(t, in, out)
		for id, meta := range in.topics {
			next, prevSize := int32(0), int32(-1)
			for _, m := range in.members {
				if !slices.Contains(m.subscribed, id) {
					continue
				}
				ps := out[m.id][id]
				if len(ps) > 0 && (ps[0] != next || ps[len(ps)-1] != next+int32(len(ps))-1) {
					t.Fatalf("%s got %v of %s, not the range from %d", m.id, ps, meta.name, next)
				}
				size := int32(len(ps))
				if prevSize >= 0 && (size > prevSize || prevSize-size > 1) {
					t.Fatalf("%s: range sizes %d then %d", meta.name, prevSize, size)
				}
				next, prevSize = next+size, size
			}
		}
		if again := (rangeAssignor{}).assign(in); !sameAssignment(out, again) {
			t.Fatalf("two runs differ")
		}
	})
}

func BenchmarkUniformAssignor(b *testing.B) {
	in := &assignInput{topics: make(map[[16]byte]topicMeta)}
	for i := range 20 {
		name := fmt.Sprintf("topic%02d", i)
		in.topics[topicID(name)] = topicMeta{name: name, partitions: 50}
	}
	for i := range 100 {
		m := assignMember{id: fmt.Sprintf("member%03d", i)}
		for id := range in.topics {
			m.subscribed = append(m.subscribed, id)
		}
		in.members = append(in.members, m)
	}
	first := uniformAssignor{}.assign(in)
	for i := range in.members {
		in.members[i].previous = first[in.members[i].id]
	}
	in.members = in.members[1:] // one member left
	b.ReportAllocs()
	for b.Loop() {
		uniformAssignor{}.assign(in)
	}
}
