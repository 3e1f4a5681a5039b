package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupsResetModes are the targets a reset offers, as Kafka's
// kafka-consumer-groups.sh --reset-offsets and samsa group reset-offsets.
var groupsResetModes = []string{"earliest", "latest", "timestamp", "offset", "shift"}

// groupsResetSpec is a parsed reset form. Partitions nil means every
// partition of the topic (of every topic the group has committed to when
// Topic is empty).
type groupsResetSpec struct {
	Topic      string
	Partitions []int32
	Mode       string
	Value      int64 // the millisecond, the offset or the shift
}

// groupsParseReset reads the form's fields; every mistake is a 400.
func groupsParseReset(q url.Values) (groupsResetSpec, error) {
	s := groupsResetSpec{Topic: strings.TrimSpace(q.Get("topic")), Mode: q.Get("to")}
	if ps := strings.TrimSpace(q.Get("partitions")); ps != "" && ps != "all" {
		for _, f := range strings.Split(ps, ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil || p < 0 {
				return s, badRequest("partition %q is not a non-negative number (give a list such as 0,1,5, or all)", strings.TrimSpace(f))
			}
			if !slices.Contains(s.Partitions, int32(p)) {
				s.Partitions = append(s.Partitions, int32(p))
			}
		}
		if s.Topic == "" {
			return s, badRequest("a partition list needs a topic")
		}
	}
	value := strings.TrimSpace(q.Get("value"))
	var err error
	switch s.Mode {
	case "earliest", "latest":
	case "timestamp":
		if s.Value, err = groupsParseTime(value); err != nil {
			return s, err
		}
	case "offset":
		if s.Value, err = strconv.ParseInt(value, 10, 64); err != nil || s.Value < 0 {
			return s, badRequest("offset %q: want a number from 0", value)
		}
	case "shift":
		if s.Value, err = strconv.ParseInt(value, 10, 64); err != nil {
			return s, badRequest("shift %q: want a whole number of records, negative to go back", value)
		}
	default:
		return s, badRequest("reset to %q: want one of %s", s.Mode, strings.Join(groupsResetModes, ", "))
	}
	return s, nil
}

// groupsParseTime reads a timestamp: RFC 3339, a datetime-local value
// (2026-01-02T15:04, taken as UTC) or Unix milliseconds.
func groupsParseTime(v string) (int64, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		if ms < 0 {
			return 0, badRequest("timestamp %q must not be negative", v)
		}
		return ms, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, badRequest("timestamp %q: want RFC 3339 (2026-01-02T15:04:05Z), 2026-01-02T15:04 (UTC) or Unix milliseconds", v)
}

// groupsResetRow is one partition of a reset plan.
type groupsResetRow struct {
	Topic     string
	Partition int32
	Current   int64 // -1: no committed (start) offset
	New       int64
	End       int64
	Clamped   bool // the target was outside the log and moved into it
}

// LagAfter is the lag the partition has once reset.
func (r groupsResetRow) LagAfter() int64 { return max(0, r.End-r.New) }

// groupsCurrent are a group's committed offsets, a share group's start
// offsets, as one map.
func groupsCurrent(ctx context.Context, adm *kadm.Client, gi *groupsInfo) (kadm.OffsetResponses, error) {
	if gi.Type != "share" {
		o, err := adm.FetchOffsets(ctx, gi.ID)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return nil, err
		}
		return o, nil
	}
	ds, err := adm.DescribeShareGroupOffsets(ctx, gi.ID)
	if err != nil {
		return nil, err
	}
	d := ds[gi.ID]
	if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
		return nil, d.Err
	}
	out := kadm.OffsetResponses{}
	d.Offsets.Each(func(o kadm.ShareOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]kadm.OffsetResponse{}
		}
		out[o.Topic][o.Partition] = kadm.OffsetResponse{Offset: kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.StartOffset}, Err: o.Err}
	})
	return out, nil
}

// groupsPlan computes where spec moves each partition, as samsa group
// reset-offsets does: the target is clamped into the log [start, end].
// It reads the current offsets, the topic's metadata (when named), and
// the start, end (and by-time) offsets of all its topics in one round
// each.
func groupsPlan(ctx context.Context, adm *kadm.Client, gi *groupsInfo, spec groupsResetSpec) ([]groupsResetRow, error) {
	current, err := groupsCurrent(ctx, adm, gi)
	if err != nil {
		return nil, err
	}
	parts := map[string][]int32{}
	if spec.Topic == "" {
		current.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				parts[o.Topic] = append(parts[o.Topic], o.Partition)
			}
		})
		if len(parts) == 0 {
			return nil, badRequest("group %q has no committed offsets to reset: name a topic", gi.ID)
		}
	} else {
		if err := groupsCheckPartitions(ctx, adm, spec.Topic, spec.Partitions, parts); err != nil {
			return nil, err
		}
	}
	topics := slices.Sorted(maps.Keys(parts))
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil && len(starts) == 0 {
		return nil, err
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil && len(ends) == 0 {
		return nil, err
	}
	var byTime kadm.ListedOffsets
	if spec.Mode == "timestamp" {
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, spec.Value, topics...); err != nil && len(byTime) == 0 {
			return nil, err
		}
	}
	listed := func(l kadm.ListedOffsets, t string, p int32) (int64, error) {
		o, ok := l.Lookup(t, p)
		switch {
		case !ok:
			return 0, fmt.Errorf("topic %q partition %d: no offset in the ListOffsets answer", t, p)
		case o.Err != nil:
			return 0, fmt.Errorf("topic %q partition %d: %w", t, p, o.Err)
		}
		return o.Offset, nil
	}
	var rows []groupsResetRow
	for _, t := range topics {
		ps := slices.Sorted(slices.Values(parts[t]))
		for _, p := range ps {
			row := groupsResetRow{Topic: t, Partition: p, Current: -1}
			if o, ok := current.Lookup(t, p); ok && o.Err == nil && o.At >= 0 {
				row.Current = o.At
			}
			start, err := listed(starts, t, p)
			if err != nil {
				return nil, err
			}
			if row.End, err = listed(ends, t, p); err != nil {
				return nil, err
			}
			var want int64
			switch spec.Mode {
			case "earliest":
				want = start
			case "latest":
				want = row.End
			case "timestamp":
				if want, err = listed(byTime, t, p); err != nil {
					return nil, err
				}
			case "offset":
				want = spec.Value
			case "shift":
				if row.Current < 0 {
					return nil, badRequest("topic %q partition %d has no committed offset to shift from", t, p)
				}
				want = groupsAddClamped(row.Current, spec.Value)
			}
			row.New = min(max(want, start), row.End)
			row.Clamped = row.New != want
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// groupsCheckPartitions fails with a 400 unless topic exists and has
// every partition of ps; it adds the partitions (all when ps is nil) to
// parts.
func groupsCheckPartitions(ctx context.Context, adm *kadm.Client, topic string, ps []int32, parts map[string][]int32) error {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return err
	}
	td, ok := tds[topic]
	switch {
	case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return badRequest("topic %q does not exist", topic)
	case td.Err != nil:
		return fmt.Errorf("topic %q: %w", topic, td.Err)
	}
	if ps == nil {
		parts[topic] = td.Partitions.Numbers()
		return nil
	}
	for _, p := range ps {
		if _, ok := td.Partitions[p]; !ok {
			return badRequest("topic %q has no partition %d (it has %d)", topic, p, len(td.Partitions))
		}
	}
	parts[topic] = ps
	return nil
}

func groupsAddClamped(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

type groupsResetView struct {
	G       *groupsInfo
	Topics  []string
	Modes   []string
	Form    url.Values
	Preview bool
	Rows    []groupsResetRow
	Shown   []groupsResetRow
	More    int
	Active  bool
}

// serveGroupsResetForm shows the reset form and, once a target is given,
// the plan: the current and new offset of each partition, nothing changed.
func (c *Console) serveGroupsResetForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel, adm, gi := c.groupsOpen(w, r, id)
	defer cancel()
	if gi == nil {
		return
	}
	if gi.Type == "streams" {
		c.fail(w, r, nil, badRequest("the console does not reset streams groups' offsets"))
		return
	}
	q := r.URL.Query()
	v := groupsResetView{G: gi, Modes: groupsResetModes, Form: q, Active: len(gi.Members) > 0}
	current, err := groupsCurrent(ctx, adm, gi)
	if err != nil {
		c.groupsFail(w, r, err)
		return
	}
	v.Topics = slices.Sorted(maps.Keys(current))
	if q.Get("to") != "" {
		spec, err := groupsParseReset(q)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		if v.Rows, err = groupsPlan(ctx, adm, gi, spec); err != nil {
			c.groupsFail(w, r, err)
			return
		}
		v.Preview = true
		v.Shown = v.Rows
		if len(v.Shown) > groupsPageSize {
			v.More = len(v.Shown) - groupsPageSize
			v.Shown = v.Shown[:groupsPageSize]
		}
	}
	c.renderSection(w, r, "groups_reset", "groups", v)
}

// serveGroupsResetApply commits the plan the preview showed, carried in
// the form as set=topic:partition:offset fields: what the user saw is
// what is committed, even if the log moved since.
func (c *Console) serveGroupsResetApply(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, nil, badRequest("reading the form: %v", err))
		return
	}
	sets := r.PostForm["set"]
	if len(sets) == 0 {
		c.fail(w, r, nil, badRequest("nothing to apply: preview a reset first"))
		return
	}
	var offsets kadm.Offsets
	parts := map[string][]int32{}
	for _, s := range sets {
		t, p, o, err := groupsParseSet(s)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		offsets.AddOffset(t, p, o, -1)
		parts[t] = append(parts[t], p)
	}
	ctx, cancel, adm, gi := c.groupsOpen(w, r, id)
	defer cancel()
	if gi == nil {
		return
	}
	if len(gi.Members) > 0 {
		c.fail(w, r, nil, groupsActiveErr(gi, "resetting its offsets"))
		return
	}
	checked := map[string][]int32{}
	for _, t := range slices.Sorted(maps.Keys(parts)) {
		if err := groupsCheckPartitions(ctx, adm, t, parts[t], checked); err != nil {
			c.groupsFail(w, r, err)
			return
		}
	}
	if err := groupsCommit(ctx, adm, gi, offsets); err != nil {
		c.groupsFail(w, r, err)
		return
	}
	c.groupLags.forget(id)
	http.Redirect(w, r, "/groups/"+url.PathEscape(id)+"?done="+url.QueryEscape(
		fmt.Sprintf("reset the offsets of %d partitions", len(sets))), http.StatusSeeOther)
}

// groupsParseSet reads one carried offset, "topic:partition:offset".
// Topic names cannot hold a colon, so the last two fields are the numbers.
func groupsParseSet(s string) (string, int32, int64, error) {
	i := strings.LastIndexByte(s, ':')
	j := -1
	if i > 0 {
		j = strings.LastIndexByte(s[:i], ':')
	}
	if j <= 0 {
		return "", 0, 0, badRequest("offset %q: want topic:partition:offset", s)
	}
	p, perr := strconv.ParseInt(s[j+1:i], 10, 32)
	o, oerr := strconv.ParseInt(s[i+1:], 10, 64)
	switch {
	case perr != nil || p < 0:
		return "", 0, 0, badRequest("offset %q: partition %q is not a number from 0", s, s[j+1:i])
	case oerr != nil || o < 0:
		return "", 0, 0, badRequest("offset %q: offset %q is not a number from 0", s, s[i+1:])
	}
	return s[:j], int32(p), o, nil
}

// groupsActiveErr is the refusal of a change Kafka allows only while the
// group has no members.
func groupsActiveErr(gi *groupsInfo, doing string) error {
	return statusErr(http.StatusConflict, fmt.Errorf("group %q has active members (state %s, %d members): stop its consumers before %s",
		gi.ID, gi.State, len(gi.Members), doing))
}

// groupsCommit commits offsets as an admin (no member, generation -1), or
// sets a share group's start offsets. The broker refuses either while the
// group has members: a consumer may have joined since the describe.
func groupsCommit(ctx context.Context, adm *kadm.Client, gi *groupsInfo, offsets kadm.Offsets) error {
	active := groupsActiveErr(&groupsInfo{ID: gi.ID, State: "now active", Members: []groupsMember{{}}}, "resetting its offsets")
	var errs []error
	if gi.Type == "share" {
		resps, err := adm.AlterShareGroupOffsets(ctx, gi.ID, offsets)
		if errors.Is(err, kerr.NonEmptyGroup) {
			return active
		}
		if err != nil {
			return err
		}
		resps.EachError(func(t string, p int32, err error) {
			errs = append(errs, fmt.Errorf("topic %q partition %d: %w", t, p, err))
		})
		return errors.Join(errs...)
	}
	resps, err := adm.CommitOffsets(ctx, gi.ID, offsets)
	if err != nil {
		return err
	}
	for _, o := range resps.Sorted() {
		switch {
		case o.Err == nil:
		case errors.Is(o.Err, kerr.UnknownMemberID), errors.Is(o.Err, kerr.IllegalGeneration),
			errors.Is(o.Err, kerr.RebalanceInProgress), errors.Is(o.Err, kerr.StaleMemberEpoch),
			errors.Is(o.Err, kerr.FencedMemberEpoch), errors.Is(o.Err, kerr.NonEmptyGroup):
			return active
		default:
			errs = append(errs, fmt.Errorf("topic %q partition %d: %w", o.Topic, o.Partition, o.Err))
		}
	}
	return errors.Join(errs...)
}

// serveGroupsDelete deletes the group (its committed offsets, a share
// group's state) once the form repeats its id.
func (c *Console) serveGroupsDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if got := r.PostFormValue("confirm"); got != id {
		c.fail(w, r, nil, badRequest("to delete group %q, type its id in the confirmation field (got %q)", id, got))
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	_, err := c.admin(r).DeleteGroup(ctx, id)
	switch {
	case errors.Is(err, kerr.NonEmptyGroup):
		c.fail(w, r, nil, statusErr(http.StatusConflict, fmt.Errorf("group %q has active members: stop its consumers before deleting it", id)))
		return
	case errors.Is(err, kerr.GroupIDNotFound):
		c.fail(w, r, nil, statusErr(http.StatusNotFound, fmt.Errorf("group %q: %w (it may have been deleted already)", id, errGroupsNotFound)))
		return
	case err != nil:
		c.groupsFail(w, r, err)
		return
	}
	c.groupLags.forget(id)
	http.Redirect(w, r, "/groups?done="+url.QueryEscape(fmt.Sprintf("deleted group %s", id)), http.StatusSeeOther)
}

// serveGroupsDeleteOffsets deletes the group's committed offsets of one
// topic (OffsetDelete; DeleteShareGroupOffsets for a share group).
func (c *Console) serveGroupsDeleteOffsets(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	topic := strings.TrimSpace(r.PostFormValue("topic"))
	if topic == "" {
		c.fail(w, r, nil, badRequest("name the topic whose offsets to delete"))
		return
	}
	ctx, cancel, adm, gi := c.groupsOpen(w, r, id)
	defer cancel()
	if gi == nil {
		return
	}
	current, err := groupsCurrent(ctx, adm, gi)
	if err != nil {
		c.groupsFail(w, r, err)
		return
	}
	ps := slices.Sorted(maps.Keys(current[topic]))
	if len(ps) == 0 {
		c.fail(w, r, nil, badRequest("group %q has no committed offsets of topic %q", id, topic))
		return
	}
	if gi.Type == "share" {
		resps, err := adm.DeleteShareGroupOffsets(ctx, id, topic)
		if errors.Is(err, kerr.NonEmptyGroup) {
			err = groupsActiveErr(gi, "deleting its offsets")
		}
		if err = cmp.Or(err, resps.Error()); err != nil {
			c.groupsFail(w, r, err)
			return
		}
	} else {
		set := kadm.TopicsSet{}
		set.Add(topic, ps...)
		resps, err := adm.DeleteOffsets(ctx, id, set)
		if err == nil {
			err = resps.Error()
		}
		if errors.Is(err, kerr.GroupSubscribedToTopic) || errors.Is(err, kerr.NonEmptyGroup) {
			err = statusErr(http.StatusConflict, fmt.Errorf("group %q still consumes topic %q: stop its consumers (or unsubscribe them) first", id, topic))
		}
		if err != nil {
			c.groupsFail(w, r, err)
			return
		}
	}
	c.groupLags.forget(id)
	http.Redirect(w, r, "/groups/"+url.PathEscape(id)+"?done="+url.QueryEscape("deleted the offsets of topic "+topic), http.StatusSeeOther)
}
