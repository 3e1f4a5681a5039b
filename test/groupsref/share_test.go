package groupsref

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The share group scenarios (KIP-932), each with Kafka's own
// KafkaShareConsumer in explicit acknowledgement mode (java/Share.java):
// the record's value says how the consumer acknowledges it.

// quiet is how long a consumer must poll nothing for "no more deliveries"
// to hold: released records are available again at once, so a broker that
// redelivered would do so well within it.
const quiet = 3 * time.Second

// shareGroup makes a one-partition topic and sets the group's configs,
// share.auto.offset.reset=earliest (the group's records start at the
// beginning of the partition, not at its end) and more.
func shareGroup(t *testing.T, b *target, topic, group string, more map[string]string) {
	t.Helper()
	b.requireFeature(t, "share.version")
	b.createTopic(t, topic, 1)
	configs := map[string]string{"share.auto.offset.reset": "earliest"}
	for k, v := range more {
		configs[k] = v
	}
	b.setGroupConfigs(t, group, configs)
}

// startShare runs one KafkaShareConsumer of group on topic in mode ack or
// hold, with consumer properties props ("key=value").
func startShare(t *testing.T, b *target, name, group, topic, mode string, props ...string) *jvm {
	t.Helper()
	return startJVM(t, name, "Share", append([]string{b.bootstrap, group, topic, mode}, props...)...)
}

// delivery is one record a consumer got.
type delivery struct {
	consumer string
	event
	at time.Time
}

// collect reads every consumer's records until done says so, failing
// after limit or on a consumer's error or exit. Each record is given to
// done as it arrives; idle polls call it with a nil record, so done can
// end on a quiet period. It selects over the consumers' channels directly
// (no forwarding goroutine), so an event it does not read stays for the
// next reader.
func collect(t *testing.T, limit time.Duration, done func(d *delivery) bool, consumers ...*jvm) {
	t.Helper()
	deadline := time.After(limit)
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(deadline)}}
	for _, j := range consumers {
		cases = append(cases,
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(j.events)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(j.exited)})
	}
	for {
		chosen, v, _ := reflect.Select(cases)
		if chosen == 0 {
			t.Fatalf("not done within %v", limit)
		}
		j := consumers[(chosen-1)/2]
		if (chosen-1)%2 == 1 {
			// Exited: the lines read before the exit are still queued.
			if len(j.events) == 0 {
				t.Fatalf("%s exited unexpectedly", j.name)
			}
			continue
		}
		ev := v.Interface().(event)
		switch ev.Ev {
		case "error":
			t.Fatalf("%s: %s", j.name, ev.Msg)
		case "record":
			if done(&delivery{consumer: j.name, event: ev, at: time.Now()}) {
				return
			}
		case "idle":
			if done(nil) {
				return
			}
		}
	}
}

// quietSince ends a collect once no record has arrived for quiet.
type quietSince struct{ last time.Time }

func (q *quietSince) record()    { q.last = time.Now() }
func (q *quietSince) over() bool { return !q.last.IsZero() && time.Since(q.last) >= quiet }

// TestShareConsumersSplitOnePartition: three consumers of one share group
// on a topic of ONE partition each get records, no record goes to two of
// them, and together they get every record.
func TestShareConsumersSplitOnePartition(t *testing.T) {
	onBrokers(t, shareProps, func(t *testing.T, b *target) {
		const topic, group, n = "split", "split-group", 300
		shareGroup(t, b, topic, group, nil)
		var consumers []*jvm
		for i := range 3 {
			// A few records a poll (record_limit makes max.poll.records
			// a hard limit on what one fetch acquires) and a pause after
			// each: the three take turns at the partition.
			consumers = append(consumers, startShare(t, b, fmt.Sprintf("consumer-%d", i), group, topic, "ack",
				"max.poll.records=5", "share.acquire.mode=record_limit", "groupsref.poll.delay.ms=100"))
		}
		awaitShareMembers(t, b, group, topic, 3)
		b.produce(t, topic, values("accept", 0, n)...)

		seen := map[int64]string{}
		per := map[string]int{}
		collect(t, 2*time.Minute, func(d *delivery) bool {
			if d == nil {
				return false
			}
			if prev, ok := seen[d.Offset]; ok {
				t.Fatalf("offset %d delivered to %s and to %s", d.Offset, prev, d.consumer)
			}
			if d.Delivery != 1 {
				t.Errorf("offset %d delivered to %s with delivery count %d, want 1", d.Offset, d.consumer, d.Delivery)
			}
			seen[d.Offset] = d.consumer
			per[d.consumer]++
			return len(seen) == n
		}, consumers...)
		for _, c := range consumers {
			if per[c.name] == 0 {
				t.Errorf("%s got no record (records per consumer: %v)", c.name, per)
			}
		}
		t.Logf("%s: records per consumer %v", b.name, per)
	})
}

// awaitShareMembers waits until the share group has want members, each
// assigned the topic's partition 0.
func awaitShareMembers(t *testing.T, b *target, group, topic string, want int) {
	t.Helper()
	adm := kadm.NewClient(b.client(t))
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		described, err := adm.DescribeShareGroups(ctx, group)
		cancel()
		if err == nil {
			err = described.Error()
		}
		if err != nil {
			last = err.Error()
		} else {
			g := described[group]
			assigned := 0
			for _, m := range g.Members {
				if ps := m.Assignment[topic]; ps != nil {
					if _, ok := ps[0]; ok {
						assigned++
					}
				}
			}
			if len(g.Members) == want && assigned == want {
				return
			}
			last = fmt.Sprintf("state %s, %d members, %d assigned %s/0", g.GroupState, len(g.Members), assigned, topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: share group %s never had %d members assigned %s/0: %s", b.name, group, want, topic, last)
}

// TestShareReleaseRejectArchive: a released record is delivered again, a
// rejected one never, and one released at every delivery is archived at
// the group's delivery-count limit (share.delivery.count.limit=3) and
// never seen again.
func TestShareReleaseRejectArchive(t *testing.T) {
	onBrokers(t, shareProps, func(t *testing.T, b *target) {
		const topic, group, limit = "acks", "acks-group", 3
		shareGroup(t, b, topic, group, map[string]string{"share.delivery.count.limit": fmt.Sprint(limit)})
		var vals []string
		for i := range 4 {
			vals = append(vals, fmt.Sprintf("accept-%d", i), fmt.Sprintf("release1-%d", i),
				fmt.Sprintf("reject-%d", i), fmt.Sprintf("release-%d", i))
		}
		b.produce(t, topic, vals...)
		// The deliveries each value must get, as delivery counts in order.
		want := map[string][]int{}
		for _, v := range vals {
			switch strings.SplitN(v, "-", 2)[0] {
			case "release1":
				want[v] = []int{1, 2}
			case "release":
				want[v] = []int{1, 2, 3}
			default:
				want[v] = []int{1}
			}
		}
		c := startShare(t, b, "consumer", group, topic, "ack")
		got := map[string][]int{}
		var q quietSince
		collect(t, 2*time.Minute, func(d *delivery) bool {
			if d != nil {
				got[d.Value] = append(got[d.Value], d.Delivery)
				q.record()
			}
			return q.over()
		}, c)
		if diff := compareDeliveries(want, got); diff != "" {
			t.Fatalf("%s: deliveries (value: delivery counts) differ from the expected:\n%s", b.name, diff)
		}
	})
}

// compareDeliveries lists the values whose deliveries differ.
func compareDeliveries(want, got map[string][]int) string {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if fmt.Sprint(want[k]) != fmt.Sprint(got[k]) {
			fmt.Fprintf(&b, "  %s: got %v, want %v\n", k, got[k], want[k])
		}
	}
	return b.String()
}

// TestShareLockTimeoutAfterKill: records a consumer holds are locked for
// the group's share.record.lock.duration.ms (10 s here), then delivered
// to another consumer, at their second delivery:
//
//   - a frozen holder (SIGSTOP: its connection open, silent): a consumer
//     started after it gets them only once the lock expires;
//   - a killed holder (SIGKILL): a consumer of the group gets them sooner
//     than half the lock's duration, as Kafka 4.4 does (the broker releases
//     a share session's records when its connection closes), and long
//     before the dead member's session would expire (45 s).
func TestShareLockTimeoutAfterKill(t *testing.T) {
	onBrokers(t, shareProps, func(t *testing.T, b *target) {
		const topic, group, n = "locks", "locks-group", 10
		const lock = 10 * time.Second
		shareGroup(t, b, topic, group, map[string]string{"share.record.lock.duration.ms": fmt.Sprint(lock.Milliseconds())})

		b.produceBatch(t, topic, values("accept", 0, n)...)
		frozen := startShare(t, b, "frozen", group, topic, "hold")
		held, heldAt := awaitHolding(t, frozen)
		frozen.freeze(t)
		taker := startShare(t, b, "taker", group, topic, "ack")
		seen := takeAll(t, taker, held, 0, n)
		frozen.kill()
		taker.close(20 * time.Second)
		for o, d := range seen {
			if wait := d.at.Sub(heldAt); held[o] && (wait < lock-time.Second || wait > lock+20*time.Second) {
				t.Errorf("%s: offset %d, held by a frozen consumer, redelivered %v after it reported, want the lock duration %v or a little more",
					b.name, o, wait.Round(time.Millisecond), lock)
			}
		}
		t.Logf("%s: frozen holder: %d records redelivered after %v", b.name, len(held), firstAt(seen).Sub(heldAt).Round(time.Millisecond))

		b.produceBatch(t, topic, values("accept", n, n)...)
		killed := startShare(t, b, "killed", group, topic, "hold")
		held, _ = awaitHolding(t, killed)
		// The second taker joins before the kill (and finds the records
		// locked), so the wait measured is the broker's, not a JVM's
		// start.
		taker = startShare(t, b, "taker-2", group, topic, "ack")
		awaitShareMembers(t, b, group, topic, 2)
		killedAt := time.Now()
		killed.kill()
		seen = takeAll(t, taker, held, n, n)
		for o, d := range seen {
			if wait := d.at.Sub(killedAt); held[o] && wait >= lock/2 {
				t.Errorf("%s: offset %d, held by a killed consumer, redelivered %v after the kill, want sooner than half the lock duration %v (released when the connection closed)",
					b.name, o, wait.Round(time.Millisecond), lock)
			}
		}
		t.Logf("%s: killed holder: %d records redelivered %v after the kill", b.name, len(held), firstAt(seen).Sub(killedAt).Round(time.Millisecond))
	})
}

// awaitHolding waits until a hold-mode consumer holds records, returning
// their offsets and when it said so.
func awaitHolding(t *testing.T, holder *jvm) (map[int64]bool, time.Time) {
	t.Helper()
	held := map[int64]bool{}
	holder.await(t, time.Minute, "holding", func(ev event) bool {
		if ev.Ev == "record" {
			held[ev.Offset] = true
		}
		return ev.Ev == "holding"
	})
	return held, time.Now()
}

// takeAll collects the taker's records of offsets from to from+n-1, each
// once, and checks the held ones come at their second delivery and the
// others at their first.
func takeAll(t *testing.T, taker *jvm, held map[int64]bool, from, n int64) map[int64]*delivery {
	t.Helper()
	seen := map[int64]*delivery{}
	collect(t, time.Minute, func(d *delivery) bool {
		if d == nil {
			return false
		}
		if d.Offset < from || d.Offset >= from+n || seen[d.Offset] != nil {
			t.Fatalf("the taker got offset %d (delivery %d), want each of %d..%d once", d.Offset, d.Delivery, from, from+n-1)
		}
		seen[d.Offset] = d
		return len(seen) == int(n)
	}, taker)
	for o, d := range seen {
		if want := map[bool]int{true: 2, false: 1}[held[o]]; d.Delivery != want {
			t.Errorf("offset %d (held: %v) came with delivery count %d, want %d", o, held[o], d.Delivery, want)
		}
	}
	return seen
}

func firstAt(seen map[int64]*delivery) time.Time {
	var first time.Time
	for _, d := range seen {
		if first.IsZero() || d.at.Before(first) {
			first = d.at
		}
	}
	return first
}

// TestShareAcksSurviveRestart: records acknowledged (and committed)
// before the broker restarts are not delivered after it, and the records
// not acknowledged are: ones never delivered, and ones a consumer held,
// unacknowledged, while the broker restarted.
func TestShareAcksSurviveRestart(t *testing.T) {
	onBrokers(t, shareProps, func(t *testing.T, b *target) {
		const topic, group, n = "restart", "restart-group", 10
		shareGroup(t, b, topic, group, nil)
		b.produceBatch(t, topic, values("accept", 0, n)...)
		first := startShare(t, b, "before", group, topic, "ack")
		committed := 0
		first.await(t, 2*time.Minute, "the first batch acknowledged", func(ev event) bool {
			if ev.Ev == "committed" {
				committed += ev.Records
			}
			return committed == n
		})
		first.close(20 * time.Second)

		// The second batch: half held by a consumer, half never delivered
		// (one-record batches, a hard limit of five a fetch).
		b.produce(t, topic, values("accept", n, n)...)
		holder := startShare(t, b, "holder", group, topic, "hold", "max.poll.records=5", "share.acquire.mode=record_limit")
		held, _ := awaitHolding(t, holder)
		// Frozen, not killed: its records are still acquired (a closed
		// connection would release them) when the broker goes down.
		holder.freeze(t)
		if len(held) == 0 || len(held) == n {
			t.Fatalf("%s: the holder held %d of the second batch's %d records, want some and not all", b.name, len(held), n)
		}

		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		if err := b.restart(ctx); err != nil {
			t.Fatalf("%s: restart: %v", b.name, err)
		}
		holder.kill()

		after := startShare(t, b, "after", group, topic, "ack")
		seen := map[int64]int{}
		var q quietSince
		collect(t, 2*time.Minute, func(d *delivery) bool {
			if d != nil {
				seen[d.Offset]++
				q.record()
			}
			return len(seen) >= n && q.over()
		}, after)
		var wrong []string
		for o := int64(0); o < 2*n; o++ {
			if want := map[bool]int{true: 0, false: 1}[o < n]; seen[o] != want {
				wrong = append(wrong, fmt.Sprintf("offset %d delivered %d times, want %d", o, seen[o], want))
			}
		}
		if len(wrong) > 0 {
			t.Fatalf("%s: after the restart (offsets %d-%d acknowledged before it, %d of the others held through it):\n  %s",
				b.name, 0, n-1, len(held), strings.Join(wrong, "\n  "))
		}
		t.Logf("%s: after the restart: offsets %d-%d delivered once (%d of them had been held), none of 0-%d", b.name, n, 2*n-1, len(held), n-1)
	})
}

// produceBatch writes the values to partition 0 of topic as one batch: a
// share fetch acquires whole batches, so one consumer gets them all.
func (b *target) produceBatch(t *testing.T, topic string, values ...string) {
	t.Helper()
	cl := b.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("%s: produce to %s: %v", b.name, topic, err)
	}
}
