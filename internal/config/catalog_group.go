package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Group is the catalog of a group's dynamic configs: the config resource of type GROUP
// (32), named by the group ID, that KIP-848 (consumer groups), KIP-932 (share groups) and
// KIP-1071 (streams groups) added. Set with kafka-configs --entity-type groups. Kafka 4.4's
// GroupConfig defines the names, types and static bounds; a group that does not set a
// config uses the broker config in its ServerDefault (group.consumer.session.timeout.ms for
// consumer.session.timeout.ms), and a value set must lie within the broker's min/max
// configs of it (ValidateGroup). ResolveGroup gives the values a group runs with.
var Group = newCatalog(groupScope, groupConfigEntries())

const groupScope = "group"

// Where the group configs take effect. The readers are being built (issue 21): each is
// read through Broker.groupConfig by the component named.
const (
	byConsumerGroups = "the consumer-protocol (KIP-848) group coordinator, per group (internal/group through Broker.groupConfig)"
	byShareGroups    = "the share group (KIP-932) coordinator, per group (internal/group through Broker.groupConfig)"
	byShareParts     = "the share-partitions of the group on each leader (internal/share through Broker.groupConfig)"
	streamsNoDelay   = "a streams group's first assignment is made at once; the initial delay (ASSIGNMENT_DELAYED) is not there yet"
	byStreamsGroups  = "the streams group (KIP-1071) coordinator, per group (internal/group through Broker.groupConfig)"
)

func groupConfigEntries() []*Entry {
	return []*Entry{
		{Name: "consumer.session.timeout.ms", Type: TypeInt, Default: "45000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "group.consumer.session.timeout.ms", Wired: byConsumerGroups,
			Doc: "The timeout to detect client failures when using the consumer group protocol."},
		{Name: "consumer.heartbeat.interval.ms", Type: TypeInt, Default: "5000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "group.consumer.heartbeat.interval.ms", Wired: byConsumerGroups,
			Doc: "The heartbeat interval given to the members of a consumer group."},
		{Name: "consumer.assignment.interval.ms", Type: TypeInt, Default: "1000", Validator: atLeast(0), Importance: Medium,
			Unsupported: "the coordinator computes a new assignment at every membership change; batching them is not there yet",
			Doc:         "The interval between assignment updates for a consumer group."},
		{Name: "share.session.timeout.ms", Type: TypeInt, Default: "45000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "group.share.session.timeout.ms", Wired: byShareGroups,
			Doc: "The timeout to detect client failures when using the share group protocol."},
		{Name: "share.heartbeat.interval.ms", Type: TypeInt, Default: "5000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "group.share.heartbeat.interval.ms", Wired: byShareGroups,
			Doc: "The heartbeat interval given to the members of a share group."},
		{Name: "share.assignment.interval.ms", Type: TypeInt, Default: "1000", Validator: atLeast(0), Importance: Medium,
			Unsupported: "the coordinator computes a new assignment at every membership change; batching them is not there yet",
			Doc:         "The interval between assignment updates for a share group."},
		{Name: "share.record.lock.duration.ms", Type: TypeInt, Default: "30000", Validator: atLeast(1000), Importance: Medium,
			ServerDefault: "group.share.record.lock.duration.ms", Wired: byShareParts,
			Doc: "The record acquisition lock duration in milliseconds for share groups."},
		{Name: "share.delivery.count.limit", Type: TypeInt, Default: "5", Validator: atLeast(2), Importance: Medium,
			ServerDefault: "group.share.delivery.count.limit", Wired: byShareParts,
			Doc: "The maximum number of delivery attempts for a record delivered to a share group."},
		{Name: "share.partition.max.record.locks", Type: TypeInt, Default: "2000", Validator: atLeast(100), Importance: Medium,
			ServerDefault: "group.share.partition.max.record.locks", Wired: byShareParts,
			Doc: "Share-group record lock limit per share-partition."},
		{Name: "share.auto.offset.reset", Type: TypeString, Default: "latest", Validator: autoOffsetReset{}, Importance: Medium,
			Wired: "where a share-partition of the group starts when it has no state (internal/share through Broker.groupConfig; ParseShareAutoOffsetReset)",
			Doc: "The strategy to initialize the share-partition start offset: earliest, latest, or by_duration:<ISO-8601 duration> " +
				"for the first offset whose timestamp is at most that long ago (PnDTnHnMn.nS, not negative)."},
		{Name: "share.isolation.level", Type: TypeString, Default: "read_uncommitted", Validator: oneOf{"read_committed", "read_uncommitted"}, Importance: Medium,
			Wired: "which records the share-partitions of the group deliver (internal/share through Broker.groupConfig)",
			Doc:   "Controls how to read records written transactionally: read_committed delivers only committed transactional records, read_uncommitted every record."},
		{Name: "share.renew.acknowledge.enable", Type: TypeBoolean, Default: "true", Importance: Medium,
			Wired: "whether ShareAcknowledge and ShareFetch take RENEW acknowledgements (KIP-1222) for the group (the share fetch path through Broker.groupConfig)",
			Doc:   "Whether the renew acknowledge type is enabled for the share group."},
		{Name: "streams.session.timeout.ms", Type: TypeInt, Default: "45000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "group.streams.session.timeout.ms", Wired: byStreamsGroups,
			Doc: "The timeout to detect client failures when using the streams group protocol."},
		{Name: "streams.heartbeat.interval.ms", Type: TypeInt, Default: "5000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "group.streams.heartbeat.interval.ms", Wired: byStreamsGroups,
			Doc: "The heartbeat interval given to the members of a streams group."},
		{Name: "streams.num.standby.replicas", Type: TypeInt, Default: "0", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "group.streams.num.standby.replicas", Wired: byStreamsGroups,
			Doc: "The number of standby replicas for each task."},
		{Name: "streams.initial.rebalance.delay.ms", Type: TypeInt, Default: "0", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "group.streams.initial.rebalance.delay.ms", Unsupported: streamsNoDelay,
			Doc: "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance."},
		{Name: "errors.deadletterqueue.topic.name", Type: TypeString, Default: "", Importance: Medium,
			Unsupported: "dead-letter queues of share groups (KIP-1191) are not there yet",
			Doc:         "The name of the topic to be used as the dead-letter queue (DLQ) topic for this share group; blank for none."},
		{Name: "errors.deadletterqueue.copy.record.enable", Type: TypeBoolean, Default: "false", Importance: Medium,
			Unsupported: "dead-letter queues of share groups (KIP-1191) are not there yet",
			Doc:         "When writing onto the dead-letter queue topic, whether to copy the original record or write only its context headers."},
	}
}

// groupBound names the broker configs that bound a group config, as Kafka's
// GroupConfig.validate checks them; min is empty for a config bounded above only.
type groupBound struct{ min, max string }

var groupBounds = map[string]groupBound{
	"consumer.session.timeout.ms":      {"group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
	"consumer.heartbeat.interval.ms":   {"group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	"share.session.timeout.ms":         {"group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
	"share.heartbeat.interval.ms":      {"group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
	"share.record.lock.duration.ms":    {"group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	"share.delivery.count.limit":       {"group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"},
	"share.partition.max.record.locks": {"group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"},
	"streams.session.timeout.ms":       {"group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
	"streams.heartbeat.interval.ms":    {"group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
	"streams.num.standby.replicas":     {"", "group.streams.max.standby.replicas"},
}

// groupSessionPairs are the session timeouts that must exceed their heartbeat intervals.
var groupSessionPairs = [][2]string{
	{"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"},
	{"share.session.timeout.ms", "share.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "streams.heartbeat.interval.ms"},
}

// ValidateGroup checks a group's complete new overrides as Kafka 4.4's
// GroupConfig.validate does: every name known ("Unknown group config name"), every value
// of its type and static range, and supported by Samsa (CheckSupported); each bounded
// config set within the broker's min and max of it; and each session timeout greater than
// its heartbeat interval, counting the broker's value for the one not set. Every failure
// wraps ErrUnknownConfig, ErrInvalidValue or ErrNotSupported (Kafka: INVALID_CONFIG). The
// bounds come from broker; a zero broker uses Kafka's defaults.
func ValidateGroup(broker Values, overrides map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if _, ok := Group.byName[name]; !ok {
			return Group.unknown(name)
		}
	}
	if err := errors.Join(Group.Validate(overrides), Group.CheckSupported(overrides)); err != nil {
		return err
	}
	b, err := groupBroker(broker)
	if err != nil {
		return err
	}
	v, err := ResolveGroup(b, overrides)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		bound, ok := groupBounds[name]
		if !ok {
			continue
		}
		n := v.s.layerInt(name)
		max := b.Int(bound.max)
		switch {
		case bound.min == "" && n > max:
			return invalidValue(Group.byName[name], name, overrides[name], fmt.Sprintf("%s must be less than or equal to %d", name, max))
		case bound.min != "" && (n < b.Int(bound.min) || n > max):
			return invalidValue(Group.byName[name], name, overrides[name], fmt.Sprintf("%s must be in the range %d to %d inclusive.", name, b.Int(bound.min), max))
		}
	}
	for _, p := range groupSessionPairs {
		session, heartbeat := p[0], p[1]
		_, setS := overrides[session]
		_, setH := overrides[heartbeat]
		if !setS && !setH {
			continue
		}
		if v.Int(session) <= v.Int(heartbeat) {
			name := session
			if !setS {
				name = heartbeat
			}
			return invalidValue(Group.byName[name], name, overrides[name], session+" must be greater than "+heartbeat)
		}
	}
	return nil
}

// groupBroker is broker, or Kafka's defaults for a zero broker.
func groupBroker(broker Values) (Values, error) {
	if !broker.IsZero() {
		if broker.s.catalog != Broker {
			panic("config: group configs need broker values")
		}
		return broker, nil
	}
	return Parse(Broker, nil)
}

// ResolveGroup returns the values a group runs with: its overrides over the broker's
// effective value of each config's ServerDefault, over Kafka's defaults. An override of a
// bounded config outside the broker's current bounds (they changed since it was set) is
// capped to them, as Kafka 4.4's GroupConfig.evaluate does. Overrides are those stored in
// the metadata, checked by ValidateGroup when they were set: one the catalog no longer
// takes (an unknown name, a bad value) is left out, so a group always resolves; the error
// names what was left out. A zero broker falls back to Kafka's defaults.
func ResolveGroup(broker Values, overrides map[string]string) (Values, error) {
	b, err := groupBroker(broker)
	if err != nil {
		return Values{}, err
	}
	kept := map[string]string{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if _, err := Group.parse(name, overrides[name]); err != nil {
			errs = append(errs, err)
			continue
		}
		kept[name] = overrides[name]
	}
	v, err := build(Group, map[Source]map[string]string{SourceGroup: kept}, b.s)
	if err != nil {
		return Values{}, err
	}
	return v, errors.Join(errs...)
}

// resolveGroup takes the group's override, capped to the broker's bounds, else the broker's
// value of the server default property, else the group default.
func (s *values) resolveGroup(name string) (resolved, error) {
	e := s.catalog.byName[name]
	raw, ok := s.layers[SourceGroup][name]
	if !ok {
		if r, ok := s.broker.fallback(e.ServerDefault); ok {
			return r, nil
		}
		return resolved{value: e.DefaultValue, source: SourceDefault}, nil
	}
	v, err := parseValue(e, name, raw)
	if err != nil {
		return resolved{}, err
	}
	if bound, ok := groupBounds[name]; ok && s.broker != nil {
		n := v.(int32)
		if max := asInt64(s.broker.effective[bound.max].value); int64(n) > max {
			n = int32(max)
		}
		if bound.min != "" {
			if min := asInt64(s.broker.effective[bound.min].value); int64(n) < min {
				n = int32(min)
			}
		}
		v = n
	}
	return resolved{value: v, source: SourceGroup}, nil
}

// layerInt is the uncapped int a group sets for name.
func (s *values) layerInt(name string) int32 {
	v, _ := parseValue(s.catalog.byName[name], name, s.layers[SourceGroup][name])
	n, _ := v.(int32)
	return n
}

// ShareAutoOffsetReset is a parsed share.auto.offset.reset: where a share-partition without
// state starts.
type ShareAutoOffsetReset struct {
	// Strategy is "earliest", "latest" or "by_duration".
	Strategy string
	// Duration, for by_duration: start at the first record whose timestamp is at least
	// now minus Duration.
	Duration time.Duration
}

// ParseShareAutoOffsetReset parses share.auto.offset.reset as Kafka's
// ShareGroupAutoOffsetResetStrategy does: earliest, latest (lower case), or by_duration:
// followed by a non-negative ISO-8601 duration as java.time.Duration.parse reads it
// (PnDTnHnMn.nS, each part optional, signs allowed per part, at least one part). A
// duration past about 292 years, which Go's time.Duration cannot hold, is refused.
func ParseShareAutoOffsetReset(s string) (ShareAutoOffsetReset, error) {
	switch s {
	case "earliest", "latest":
		return ShareAutoOffsetReset{Strategy: s}, nil
	}
	iso, ok := strings.CutPrefix(s, "by_duration:")
	if !ok {
		return ShareAutoOffsetReset{}, fmt.Errorf("unrecognized strategy %q", s)
	}
	d, err := parseISODuration(iso)
	if err != nil {
		return ShareAutoOffsetReset{}, err
	}
	if d < 0 {
		return ShareAutoOffsetReset{}, errors.New("negative duration is not supported in by_duration offset reset strategy")
	}
	return ShareAutoOffsetReset{Strategy: "by_duration", Duration: d}, nil
}

// autoOffsetReset is Kafka's ShareGroupAutoOffsetResetStrategy.Validator.
type autoOffsetReset struct{}

func (autoOffsetReset) Validate(v any) error {
	if _, err := ParseShareAutoOffsetReset(v.(string)); err != nil {
		return fmt.Errorf("the value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>' (%v)", err)
	}
	return nil
}

func (autoOffsetReset) String() string { return "[latest, earliest, by_duration:PnDTnHnMn.nS]" }

// parseISODuration reads java.time.Duration.parse's format: an optional sign, P, an optional
// days part nD, then optionally T followed by at least one of nH, nM and n[.fraction]S (up
// to nine fraction digits, '.' or ','), each number with an optional sign; letters in any
// case. A sign before P negates the whole.
func parseISODuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("text cannot be parsed to a Duration: %q", s)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) < 2 || (s[0] != 'P' && s[0] != 'p') {
		return 0, bad
	}
	s = s[1:]
	var total time.Duration
	add := func(n int64, unit time.Duration) bool {
		if n > int64(1<<63-1)/int64(unit) || n < -int64(1<<63-1)/int64(unit) {
			return false
		}
		next := total + time.Duration(n)*unit
		if (n > 0 && next < total) || (n < 0 && next > total) {
			return false
		}
		total = next
		return true
	}
	parts := 0
	if n, rest, ok := isoNumber(s, "Dd"); ok {
		if !add(n, 24*time.Hour) {
			return 0, bad
		}
		s, parts = rest, parts+1
	}
	if s != "" {
		if s[0] != 'T' && s[0] != 't' {
			return 0, bad
		}
		s = s[1:]
		timeParts := 0
		for _, u := range []struct {
			letters string
			unit    time.Duration
		}{{"Hh", time.Hour}, {"Mm", time.Minute}} {
			if n, rest, ok := isoNumber(s, u.letters); ok {
				if !add(n, u.unit) {
					return 0, bad
				}
				s, timeParts = rest, timeParts+1
			}
		}
		if s != "" {
			d, ok := isoSeconds(s)
			if !ok || !add(int64(d), 1) {
				return 0, bad
			}
			s, timeParts = "", timeParts+1
		}
		if timeParts == 0 {
			return 0, bad
		}
		parts += timeParts
	}
	if parts == 0 || s != "" {
		return 0, bad
	}
	if neg {
		total = -total
	}
	return total, nil
}

// isoNumber reads a signed integer followed by one of the unit letters.
func isoNumber(s, letters string) (int64, string, bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i || j >= len(s) || !strings.ContainsRune(letters, rune(s[j])) {
		return 0, s, false
	}
	var n int64
	for _, c := range s[i:j] {
		if n > (1<<63-1-int64(c-'0'))/10 {
			return 0, s, false
		}
		n = n*10 + int64(c-'0')
	}
	if s[0] == '-' {
		n = -n
	}
	return n, s[j+1:], true
}

// isoSeconds reads the whole rest as [sign]digits[(.|,)fraction]S.
func isoSeconds(s string) (time.Duration, bool) {
	if !strings.HasSuffix(s, "S") && !strings.HasSuffix(s, "s") {
		return 0, false
	}
	s = s[:len(s)-1]
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	whole, frac, hasFrac := strings.Cut(strings.Replace(s, ",", ".", 1), ".")
	if whole == "" || !isDigits(whole) || (hasFrac && (len(frac) > 9 || (frac != "" && !isDigits(frac)))) {
		return 0, false
	}
	var secs int64
	for _, c := range whole {
		if secs > (1<<63-1)/int64(time.Second)/10 {
			return 0, false
		}
		secs = secs*10 + int64(c-'0')
	}
	if secs > (1<<63-1)/int64(time.Second)-1 {
		return 0, false
	}
	var nanos int64
	for i := range 9 {
		nanos *= 10
		if i < len(frac) {
			nanos += int64(frac[i] - '0')
		}
	}
	d := time.Duration(secs)*time.Second + time.Duration(nanos)
	if neg {
		d = -d
	}
	return d, true
}

// groupTypeBrokerEntries are the broker configs of share and streams groups: the defaults
// of the group configs above and the bounds ValidateGroup holds them to, with Kafka 4.4's
// defaults. The group.consumer.* ones are in groupEntries.
func groupTypeBrokerEntries() []*Entry {
	bound := func(name, def string, v Validator, doc string) *Entry {
		return &Entry{Name: name, Type: TypeInt, Default: def, Validator: v, Importance: Medium,
			Wired: "the bounds of the group config it names (config.ValidateGroup, in the alter APIs); ResolveGroup caps a group's value to it", Doc: doc}
	}
	value := func(name, def string, v Validator, wired, doc string) *Entry {
		return &Entry{Name: name, Type: TypeInt, Default: def, Validator: v, Importance: Medium,
			Wired: wired + "; also the default of the group config " + strings.TrimPrefix(name, "group."), Doc: doc}
	}
	return []*Entry{
		value("group.share.session.timeout.ms", "45000", atLeast(1), byShareGroups, "The timeout to detect client failures when using the share group protocol."),
		bound("group.share.min.session.timeout.ms", "45000", atLeast(1), "The minimum allowed session timeout for share group members."),
		bound("group.share.max.session.timeout.ms", "60000", atLeast(1), "The maximum allowed session timeout for share group members."),
		value("group.share.heartbeat.interval.ms", "5000", atLeast(1), byShareGroups, "The heartbeat interval given to the members of a share group."),
		bound("group.share.min.heartbeat.interval.ms", "5000", atLeast(1), "The minimum heartbeat interval for share group members."),
		bound("group.share.max.heartbeat.interval.ms", "15000", atLeast(1), "The maximum heartbeat interval for share group members."),
		value("group.share.record.lock.duration.ms", "30000", between(1000, 3600000), byShareParts, "The record acquisition lock duration in milliseconds for share groups."),
		bound("group.share.min.record.lock.duration.ms", "15000", between(1000, 30000), "The record acquisition lock minimum duration in milliseconds for share groups."),
		bound("group.share.max.record.lock.duration.ms", "60000", between(30000, 3600000), "The record acquisition lock maximum duration in milliseconds for share groups."),
		value("group.share.delivery.count.limit", "5", between(2, 10), byShareParts, "The maximum number of delivery attempts for a record delivered to a share group."),
		bound("group.share.min.delivery.count.limit", "2", between(2, 5), "The minimum delivery count limit a share group may be configured with."),
		bound("group.share.max.delivery.count.limit", "10", between(5, 25), "The maximum delivery count limit a share group may be configured with."),
		value("group.share.partition.max.record.locks", "2000", between(100, 10000), byShareParts, "Share-group record lock limit per share-partition."),
		{Name: "group.share.max.size", Type: TypeInt, Default: "200", Validator: between(10, 1000), Importance: Medium,
			Wired: "the share group coordinator (group.ConfigFrom): a member past it is refused with GROUP_MAX_SIZE_REACHED",
			Doc:   "The maximum number of members that a single share group can accommodate."},
		bound("group.share.min.partition.max.record.locks", "100", between(100, 2000), "The minimum record lock limit per share-partition a share group may be configured with."),
		bound("group.share.max.partition.max.record.locks", "4000", between(2000, 10000), "The maximum record lock limit per share-partition a share group may be configured with."),
		value("group.streams.session.timeout.ms", "45000", atLeast(1), byStreamsGroups, "The timeout to detect client failures when using the streams group protocol."),
		bound("group.streams.min.session.timeout.ms", "45000", atLeast(1), "The minimum allowed session timeout for streams group members."),
		bound("group.streams.max.session.timeout.ms", "60000", atLeast(1), "The maximum allowed session timeout for streams group members."),
		value("group.streams.heartbeat.interval.ms", "5000", atLeast(1), byStreamsGroups, "The heartbeat interval given to the members of a streams group."),
		bound("group.streams.min.heartbeat.interval.ms", "5000", atLeast(1), "The minimum heartbeat interval for streams group members."),
		bound("group.streams.max.heartbeat.interval.ms", "15000", atLeast(1), "The maximum heartbeat interval for streams group members."),
		value("group.streams.num.standby.replicas", "0", atLeast(0), byStreamsGroups, "The number of standby replicas for each task."),
		bound("group.streams.max.standby.replicas", "2", atLeast(0), "The maximum allowed value for the group-level configuration of streams.num.standby.replicas."),
		{Name: "group.streams.initial.rebalance.delay.ms", Type: TypeInt, Default: "0", Validator: atLeast(0), Importance: Medium,
			Unsupported: streamsNoDelay,
			Doc:         "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance (Kafka's default 3000; Samsa's 0, the only value it has)."},
	}
}
