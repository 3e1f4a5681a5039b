package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

var kerrTopicExists = kerr.TopicAlreadyExists

// MirrorSourceConfig is the topic config that makes a Samsa topic a
// read-only mirror of a topic on another cluster, which only the mirror's
// offset-preserving appends write (docs/DESIGN-mirror-topics.md).
const MirrorSourceConfig = "samsa.mirror.source"

// progressPartitions is Kafka Connect's offset.storage.partitions default:
// the progress topic is a Connect offsets topic.
const progressPartitions = 25

// statusPartitions is Kafka Connect's status.storage.partitions default.
const statusPartitions = 5

// runTopics creates the internal topics, then keeps the target's topics in
// step with the source's: new topics matching the filter, partition counts,
// configs and ACLs, each on its interval.
func (fl *flow) runTopics(ctx context.Context) error {
	return fl.topicLoop(ctx, fl.ensureInternalTopics, func() {})
}

// topicLoop makes the admin clients, creates what ensure creates, syncs
// the topics (then calls changed), configs and ACLs once, and again on
// their intervals (changed after each topic refresh that worked), until
// ctx ends (nil) or a sync fails (its error).
func (fl *flow) topicLoop(ctx context.Context, ensure func(ctx context.Context, srcAdm, tgtAdm *kadm.Client) error, changed func()) error {
	src, err := fl.roleClient(fl.cfg.Source, roleAdmin)
	if err != nil {
		return err
	}
	defer src.Close()
	tgt, err := fl.roleClient(fl.cfg.Target, roleAdmin)
	if err != nil {
		return err
	}
	defer tgt.Close()
	srcAdm, tgtAdm := kadm.NewClient(src), kadm.NewClient(tgt)

	if err := ensure(ctx, srcAdm, tgtAdm); err != nil {
		return err
	}
	if err := fl.syncTopics(ctx, srcAdm, tgtAdm); err != nil {
		return err
	}
	changed()
	if fl.cfg.SyncTopicConfigs {
		if err := fl.syncConfigs(ctx, srcAdm, tgtAdm); err != nil {
			return err
		}
	}
	if fl.cfg.SyncTopicACLs {
		if err := fl.syncACLs(ctx, src, tgt); err != nil {
			return err
		}
	}
	refresh := tickerOrNil(fl.cfg.RefreshTopics, fl.cfg.RefreshTopicsInterval)
	configs := tickerOrNil(fl.cfg.SyncTopicConfigs, fl.cfg.SyncTopicConfigsInterval)
	acls := tickerOrNil(fl.cfg.SyncTopicACLs, fl.cfg.SyncTopicACLsInterval)
	defer stopTicker(refresh)
	defer stopTicker(configs)
	defer stopTicker(acls)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tickC(refresh):
			if err = fl.syncTopics(ctx, srcAdm, tgtAdm); err == nil {
				changed()
			}
		case <-tickC(configs):
			err = fl.syncConfigs(ctx, srcAdm, tgtAdm)
		case <-tickC(acls):
			err = fl.syncACLs(ctx, src, tgt)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

func tickerOrNil(on bool, every time.Duration) *time.Ticker {
	if !on || every <= 0 {
		return nil
	}
	return time.NewTicker(every)
}

func stopTicker(t *time.Ticker) {
	if t != nil {
		t.Stop()
	}
}

func tickC(t *time.Ticker) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

func (fl *flow) ensureInternalTopics(ctx context.Context, srcAdm, tgtAdm *kadm.Client) error {
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	syncAdm := srcAdm
	if fl.offsetSyncsCluster() == fl.cfg.Target {
		syncAdm = tgtAdm
	}
	if !fl.cfg.OffsetPreserving && fl.cfg.EmitOffsetSyncs {
		if err := ensureTopic(ctx, syncAdm, fl.offsetSyncsTopic(), 1, fl.cfg.OffsetSyncsTopicReplicationFactor); err != nil {
			return err
		}
	}
	if !fl.cfg.OffsetPreserving {
		// MirrorMaker 2's dedicated mode keeps a Kafka Connect worker's
		// three topics on the target per source: the offsets (the
		// progress), and configs and statuses, which Samsa's mirror does
		// not use but creates as Kafka's does (the same partition counts),
		// so either can take over the other's flow and tools find what
		// they expect.
		for _, it := range []struct {
			name       string
			partitions int32
			rf         int16
		}{
			{fl.progressTopic(), int32(fl.workerInt("offset.storage.partitions", progressPartitions)), int16(fl.workerInt("offset.storage.replication.factor", -1))},
			{"mm2-configs." + fl.cfg.Source + ".internal", 1, int16(fl.workerInt("config.storage.replication.factor", -1))},
			{"mm2-status." + fl.cfg.Source + ".internal", int32(fl.workerInt("status.storage.partitions", statusPartitions)), int16(fl.workerInt("status.storage.replication.factor", -1))},
		} {
			if err := ensureTopic(ctx, tgtAdm, it.name, it.partitions, it.rf); err != nil {
				return err
			}
		}
	}
	if fl.cfg.EmitCheckpoints {
		if err := ensureTopic(ctx, tgtAdm, fl.checkpointsTopic(), 1, fl.cfg.CheckpointsTopicReplicationFactor); err != nil {
			return err
		}
	}
	return nil
}

// shouldReplicate is MirrorSourceConnector's rule: the filter's topics and
// the heartbeats topics, never an internal topic, never one that came from
// the target (a cycle).
func (fl *flow) shouldReplicate(topic string) bool {
	return fl.cfg.ShouldReplicateTopic(topic)
}

// syncTopics creates missing remote topics, grows partition counts and
// publishes the set to the copier.
func (fl *flow) syncTopics(ctx context.Context, srcAdm, tgtAdm *kadm.Client) error {
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	listed, err := srcAdm.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("list %s's topics: %w", fl.cfg.Source, err)
	}
	want := map[string]int32{}
	for t, d := range listed {
		if d.Err == nil && fl.shouldReplicate(t) {
			want[t] = int32(len(d.Partitions))
		}
	}
	if len(want) == 0 {
		return nil
	}
	remotes := make([]string, 0, len(want))
	byRemote := map[string]string{}
	for t := range want {
		r := fl.remote(t)
		remotes = append(remotes, r)
		byRemote[r] = t
	}
	sort.Strings(remotes)
	have, err := tgtAdm.ListTopics(ctx, remotes...)
	if err != nil {
		return fmt.Errorf("list %s's topics: %w", fl.cfg.Target, err)
	}
	var configs map[string]map[string]*string
	if fl.cfg.SyncTopicConfigs {
		var missing []string
		for _, r := range remotes {
			if d, ok := have[r]; !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				missing = append(missing, byRemote[r])
			}
		}
		if configs, err = fl.sourceConfigs(ctx, srcAdm, missing); err != nil {
			return err
		}
	}
	ready := map[string]int32{}
	for _, r := range remotes {
		t := byRemote[r]
		n := want[t]
		d, ok := have[r]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			cfgs := configs[t]
			if cfgs == nil {
				cfgs = map[string]*string{}
			}
			if fl.cfg.OffsetPreserving {
				cfgs[MirrorSourceConfig] = ptr(fl.cfg.Source)
			}
			resp, err := tgtAdm.CreateTopic(ctx, n, fl.cfg.ReplicationFactor, cfgs, r)
			if err == nil {
				err = resp.Err
			}
			if errors.Is(err, kerr.TopicAlreadyExists) {
				fl.log.Debug("mirror: remote topic exists", "topic", r, "listed", ok, "err", d.Err)
				break
			}
			if err != nil {
				if fl.cfg.OffsetPreserving && errors.Is(err, kerr.InvalidConfig) {
					return fmt.Errorf("create %s on %s: the target refuses %s (%v): offset-preserving mirroring needs a Samsa target", r, fl.cfg.Target, MirrorSourceConfig, err)
				}
				return fmt.Errorf("create %s on %s: %w", r, fl.cfg.Target, err)
			}
			fl.topicsCreated.Add(1)
			fl.log.Info("mirror: created remote topic", "topic", r, "partitions", n)
		case d.Err != nil:
			return fmt.Errorf("topic %s on %s: %w", r, fl.cfg.Target, d.Err)
		case int32(len(d.Partitions)) < n:
			resp, err := tgtAdm.UpdatePartitions(ctx, int(n), r)
			if err == nil {
				var one kadm.CreatePartitionsResponse
				one, err = resp.On(r, nil)
				if err == nil {
					err = one.Err
				}
			}
			if err != nil {
				return fmt.Errorf("grow %s on %s to %d partitions: %w", r, fl.cfg.Target, n, err)
			}
			fl.log.Info("mirror: grew remote topic", "topic", r, "partitions", n)
		case int32(len(d.Partitions)) > n:
			// A topic cannot shrink; the extra partitions stay empty.
			n = int32(len(d.Partitions))
		}
		ready[t] = n
	}
	if fl.cfg.OffsetPreserving {
		if err := fl.checkMirrorTopics(ctx, tgtAdm, ready); err != nil {
			return err
		}
	}
	fl.publish(ready)
	return nil
}

// checkMirrorTopics drops from ready the remote topics that exist on the
// target without being mirror topics of this source: appending to them at
// the source's offsets is refused by the broker, and writing them another
// way would break the offsets' promise.
func (fl *flow) checkMirrorTopics(ctx context.Context, tgtAdm *kadm.Client, ready map[string]int32) error {
	remotes := make([]string, 0, len(ready))
	for t := range ready {
		remotes = append(remotes, fl.remote(t))
	}
	rcs, err := tgtAdm.DescribeTopicConfigs(ctx, remotes...)
	if err != nil {
		return fmt.Errorf("describe %s's topic configs: %w", fl.cfg.Target, err)
	}
	for _, rc := range rcs {
		src := ""
		for _, c := range rc.Configs {
			if c.Key == MirrorSourceConfig && c.Value != nil {
				src = *c.Value
			}
		}
		if rc.Err == nil && src == fl.cfg.Source {
			continue
		}
		for t := range ready {
			if fl.remote(t) == rc.Name {
				delete(ready, t)
			}
		}
		why := fmt.Sprintf("%s on %s is not a mirror topic of %s (%s=%q)", rc.Name, fl.cfg.Target, fl.cfg.Source, MirrorSourceConfig, src)
		if rc.Err != nil {
			why = fmt.Sprintf("%s on %s: %v", rc.Name, fl.cfg.Target, rc.Err)
		}
		fl.stopTopic(rc.Name, why)
	}
	return nil
}

func (fl *flow) stopTopic(remote, why string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for k, s := range fl.parts {
		if fl.remote(k.topic) == remote && s.stopped == "" {
			s.stopped = why
			fl.log.Warn("mirror: not copying", "topic", k.topic, "partition", k.partition, "why", why)
		}
	}
}

func (fl *flow) publish(ready map[string]int32) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	grew := false
	for t, n := range ready {
		if fl.topics[t] < n {
			fl.topics[t] = n
			grew = true
		}
	}
	if grew {
		close(fl.grown)
		fl.grown = make(chan struct{})
	}
}

// sourceConfigs are the configs to copy of each topic: set on the source
// (or its defaults, when the filter asks for them), not sensitive, not read
// only, passing the config-property filter. Samsa's own mirror marker never
// travels: a chained mirror's target is a mirror of its own source.
func (fl *flow) sourceConfigs(ctx context.Context, srcAdm *kadm.Client, topics []string) (map[string]map[string]*string, error) {
	out := map[string]map[string]*string{}
	if len(topics) == 0 {
		return out, nil
	}
	rcs, err := srcAdm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe %s's topic configs: %w", fl.cfg.Source, err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		m := map[string]*string{}
		for _, c := range rc.Configs {
			if c.Key == MirrorSourceConfig || c.Sensitive || c.Value == nil {
				continue
			}
			if !fl.cfg.ConfigFilter.ShouldReplicateConfigProperty(c.Key) {
				continue
			}
			isDefault := c.Source == kmsg.ConfigSourceDefaultConfig || c.Source == kmsg.ConfigSourceStaticBrokerConfig ||
				c.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig
			if isDefault && !fl.cfg.ConfigFilter.ShouldReplicateSourceDefault(c.Key) {
				continue
			}
			m[c.Key] = c.Value
		}
		out[rc.Name] = m
	}
	return out, nil
}

// syncConfigs sets each mirrored topic's source configs on its remote
// topic (incremental SET: a config the target set itself and the source
// does not is left alone, as Kafka's use.defaults.from=target).
func (fl *flow) syncConfigs(ctx context.Context, srcAdm, tgtAdm *kadm.Client) error {
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	topics := fl.mirrored()
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	configs, err := fl.sourceConfigs(ctx, srcAdm, names)
	if err != nil {
		return err
	}
	for _, t := range names {
		cfgs := configs[t]
		if len(cfgs) == 0 {
			continue
		}
		var alters []kadm.AlterConfig
		for _, k := range sortedKeys(cfgs) {
			alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: cfgs[k]})
		}
		resps, err := tgtAdm.AlterTopicConfigs(ctx, alters, fl.remote(t))
		if err != nil {
			return fmt.Errorf("sync configs of %s: %w", fl.remote(t), err)
		}
		for _, r := range resps {
			if r.Err != nil {
				fl.log.Warn("mirror: config sync refused", "topic", r.Name, "err", r.Err, "message", r.ErrMessage)
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// syncACLs copies the source's topic ACLs that MirrorMaker 2 copies (allow
// rules other than WRITE, on replicated topics), rewritten for the remote
// topics, to the target. A source without an authorizer has none to copy.
func (fl *flow) syncACLs(ctx context.Context, src, tgt *kgo.Client) error {
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeTopic
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, src)
	if err != nil {
		return fmt.Errorf("describe %s's ACLs: %w", fl.cfg.Source, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.SecurityDisabled) {
			return nil
		}
		return fmt.Errorf("describe %s's ACLs: %w", fl.cfg.Source, err)
	}
	creates := kmsg.NewPtrCreateACLsRequest()
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			b := mirrorconf.ACLBinding{
				ResourceType: int8(r.ResourceType), PatternType: int8(r.ResourcePatternType), ResourceName: r.ResourceName,
				Principal: a.Principal, Host: a.Host, Operation: int8(a.Operation), Permission: int8(a.PermissionType),
			}
			if !mirrorconf.ShouldReplicateACL(b) {
				continue
			}
			// As Kafka's: the pattern's name, whatever its type, is
			// asked as a topic name.
			if !fl.shouldReplicate(b.ResourceName) {
				continue
			}
			t := mirrorconf.TargetACL(b, fl.cfg.Policy, fl.cfg.Source)
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType = kmsg.ACLResourceType(t.ResourceType)
			c.ResourceName = t.ResourceName
			c.ResourcePatternType = kmsg.ACLResourcePatternType(t.PatternType)
			c.Principal = t.Principal
			c.Host = t.Host
			c.Operation = kmsg.ACLOperation(t.Operation)
			c.PermissionType = kmsg.ACLPermissionType(t.Permission)
			creates.Creations = append(creates.Creations, c)
		}
	}
	if len(creates.Creations) == 0 {
		return nil
	}
	cresp, err := creates.RequestWith(ctx, tgt)
	if err != nil {
		return fmt.Errorf("create ACLs on %s: %w", fl.cfg.Target, err)
	}
	var msgs []string
	for _, r := range cresp.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		slices.Sort(msgs)
		msgs = slices.Compact(msgs)
		fl.log.Warn("mirror: ACL sync refused", "errors", strings.Join(msgs, "; "))
	}
	return nil
}
