package broker

import (
	"context"
	"math"
	"net"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/quota"
)

// clientQuotas are the broker's client quota managers, one per kind
// (internal/quota, docs/DESIGN-quotas.md). Each request's usage is
// recorded against the quota entity that covers its principal and client
// ID; the longest throttle time of the quotas it passed is the one its
// response carries and its connection is muted for (KIP-219).
type clientQuotas struct {
	produce, fetch, request, mutation *quota.Manager
}

func newClientQuotas(v config.Values) clientQuotas {
	window := func(num, size string) quota.Config {
		return quota.Config{Samples: int(v.Int(num)), Window: time.Duration(v.Int(size)) * time.Second}
	}
	client := window("quota.window.num", "quota.window.size.seconds")
	return clientQuotas{
		produce:  quota.NewManager(quota.Produce, client),
		fetch:    quota.NewManager(quota.Fetch, client),
		request:  quota.NewManager(quota.Request, client),
		mutation: quota.NewManager(quota.ControllerMutation, window("controller.quota.window.num", "controller.quota.window.size.seconds")),
	}
}

// set gives each manager the quotas of its kind, by key.
func (q clientQuotas) set(byEntity map[quota.Entity]map[string]float64) {
	for _, m := range []*quota.Manager{q.produce, q.fetch, q.request, q.mutation} {
		of := map[quota.Entity]float64{}
		for e, values := range byEntity {
			if v, ok := values[m.Kind().Key()]; ok {
				of[e] = v
			}
		}
		m.SetQuotas(of)
	}
}

// applyQuotas hands the client quotas of a new image to the managers and
// the IP connection rates, when they changed (the image keeps the map it
// had while no quota record came).
func (b *Broker) applyQuotas(prev, img *metadata.Image) {
	all := img.ClientQuotas()
	if prev != nil && sameMap(prev.ClientQuotas(), all) {
		return
	}
	byEntity := map[quota.Entity]map[string]float64{}
	byIP, ipDefault := map[string]float64{}, math.Inf(1)
	for e, values := range all {
		if e.IP.Set {
			if v, ok := values[metadata.QuotaConnectionCreationRate]; ok {
				if e.IP.Default {
					ipDefault = v
				} else if ip := net.ParseIP(e.IP.Name); ip != nil {
					byIP[ip.String()] = v
				} else {
					// A host name, which the controller found to resolve
					// when it was set: it counts for each of its addresses.
					addrs, _ := net.LookupHost(e.IP.Name)
					for _, a := range addrs {
						byIP[a] = v
					}
				}
			}
			continue
		}
		byEntity[quota.Entity{User: partOf(e.User), ClientID: partOf(e.ClientID)}] = values
	}
	b.quotas.set(byEntity)
	b.connRates.setIPQuotas(byIP, ipDefault)
}

func partOf(n metadata.QuotaName) quota.Part {
	return quota.Part{Set: n.Set, Default: n.Default, Name: n.Name}
}

// sameMap reports whether two maps are the same map, not equal ones: an
// image shares its quotas with the one before until a quota record
// changes them.
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// quotaUser is the user a connection's usage counts for: its principal's
// name, as Kafka's quotas take it (ANONYMOUS without authentication).
func (c *conn) quotaUser() string { return c.principal.Name }

// throttleFor makes the request being handled wait at least d.
func (c *conn) throttleFor(d time.Duration) {
	c.throttle = max(c.throttle, d)
}

// requestQuotaExempt are the requests request_percentage does not count,
// as Kafka exempts them: what nodes send each other, and the SASL
// exchange, which has no principal yet.
func requestQuotaExempt(c *conn) bool {
	api := c.api
	switch api.key {
	case kmsg.SASLHandshake, kmsg.SASLAuthenticate, kmsg.WriteTxnMarkers:
		return true
	}
	return api.controllerOnly || c.replicaFetch
}

// settleQuotas ends a request's quotas before its response is encoded:
// the time its handler took counts against request_percentage, and the
// response carries the longest throttle time of its quotas (added to any
// the handler set).
func (b *Broker) settleQuotas(c *conn, resp kmsg.Response) {
	if b.quotas.request.Enabled() && !requestQuotaExempt(c) {
		now := b.cfg.Clock.Now()
		percent := float64(time.Since(c.reqStart).Nanoseconds()) * 100 / float64(time.Second)
		c.throttleBy(quota.Request, b.quotas.request.Record(c.quotaUser(), c.clientID, percent, now))
	}
	if c.throttle <= 0 || resp == nil {
		return
	}
	if t, ok := resp.(interface {
		Throttle() (int32, bool)
		SetThrottle(int32)
	}); ok {
		had, clientWaits := t.Throttle()
		t.SetThrottle(max(had, int32(min(c.throttle.Milliseconds(), int64(1<<31-1)))))
		c.clientWaits = clientWaits
	}
}

// capFetchBytes keeps a consumer's fetch within one window of its quota.
// Kafka caps it at all windows but one (getMaxValueInQuotaWindow), so a
// fetch may carry ten seconds of the quota, after which the consumer waits
// ten seconds; and as the throttle time's estimate runs long by about half
// a fetch over the windows, large fetches leave a consumer well under its
// quota (0.84 of it measured with Kafka's cap, 0.98 with this one). The
// first batch is still returned whole, however big.
func (b *Broker) capFetchBytes(c *conn, req *kmsg.FetchRequest) {
	if !b.quotas.fetch.Enabled() {
		return
	}
	limit := b.quotas.fetch.PerWindow(c.quotaUser(), c.clientID)
	if limit < float64(req.MaxBytes) || req.MaxBytes <= 0 {
		req.MaxBytes = int32(max(1, min(limit, float64(1<<31-1))))
	}
}

// fetchThrottled records a consumer fetch's bytes against its quota and
// reports whether it must be throttled instead: then the bytes are taken
// back and the records read released, as Kafka answers a throttled fetch
// empty.
func (b *Broker) fetchThrottled(c *conn, results []fetchResult) bool {
	if !b.quotas.fetch.Enabled() {
		return false
	}
	size := 0.0
	for _, r := range results {
		size += float64(r.rr.Size)
	}
	now := b.cfg.Clock.Now()
	d := b.quotas.fetch.Record(c.quotaUser(), c.clientID, size, now)
	if d <= 0 {
		return false
	}
	b.quotas.fetch.Unrecord(c.quotaUser(), c.clientID, size, now)
	for i := range results {
		results[i].rr.Release()
	}
	c.throttleBy(quota.Fetch, d)
	return true
}

// admitMutations applies the controller mutation quota (KIP-599) to the
// topics a request would create or delete, in their order: with strict
// (the versions that know THROTTLING_QUOTA_EXCEEDED: CreateTopics v6+,
// CreatePartitions v3+, DeleteTopics v5+) a topic is refused once the
// client's bucket is in debt; otherwise every topic is admitted and the
// debt is the response's throttle time. It returns the admitted items and,
// when some were refused, which (nil: none). The quota is kept by the
// broker the client asked, where Kafka keeps it on the active controller
// the request is forwarded to: a client spreading its mutations over
// several brokers gets each one's quota.
func admitMutations[T any](b *Broker, c *conn, strict bool, items []T, partitions func(T) int32) ([]T, []bool) {
	if !b.quotas.mutation.Enabled() {
		return items, nil
	}
	now := b.cfg.Clock.Now()
	var throttle time.Duration
	kept, refused := filterDenied(items, func(it T) bool {
		ok, d := b.quotas.mutation.Admit(c.quotaUser(), c.clientID, float64(partitions(it)), strict, now)
		throttle = max(throttle, d)
		return ok
	})
	c.throttleBy(quota.ControllerMutation, throttle)
	return kept, refused
}

// newPartitions is how many partitions a CreateTopics topic asks for: its
// assignment's, its count, or the broker's num.partitions.
func (b *Broker) newPartitions(rt kmsg.CreateTopicsRequestTopic) int32 {
	switch {
	case len(rt.ReplicaAssignment) > 0:
		return int32(len(rt.ReplicaAssignment))
	case rt.NumPartitions > 0:
		return rt.NumPartitions
	}
	return b.brokerConfig(b.ctrl.Image()).Int("num.partitions")
}

// addedPartitions is how many partitions a CreatePartitions topic adds:
// its new count less the partitions it has, as far as this broker knows.
func (b *Broker) addedPartitions(rt kmsg.CreatePartitionsRequestTopic) int32 {
	if ts, ok := b.topics.byTopicName(rt.Topic); ok {
		return max(0, rt.Count-int32(len(ts.partitions)))
	}
	return rt.Count
}

// partitionsOf is how many partitions a DeleteTopics topic has, as far as
// this broker knows (0 for a topic it does not know: nothing to delete).
func (b *Broker) partitionsOf(t deleteTopicAsked) int32 {
	ts, ok := b.topics.byTopicID(t.TopicID)
	if t.Name != nil {
		ts, ok = b.topics.byTopicName(*t.Name)
	}
	if !ok {
		return 0
	}
	return int32(len(ts.partitions))
}

// pause waits d, or less if the broker shuts down.
func (b *Broker) pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
