package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/model"
)

// Apply returns the image after recs, applied in order as one batch, keeping
// the offset. On error nothing is applied and img is returned unchanged.
func (img *Image) Apply(recs ...Record) (*Image, error) {
	return img.ApplyAt(img.offset, recs...)
}

// ApplyAt is Apply for the batch at a Raft index: the new image reports
// offset as its Offset.
func (img *Image) ApplyAt(offset int64, recs ...Record) (*Image, error) {
	b := newBuilder(img)
	b.offset = offset
	for i, r := range recs {
		if err := b.apply(r); err != nil {
			return img, fmt.Errorf("metadata: apply record %d (%s): %w", i, r.Type(), err)
		}
	}
	next := b.finish()
	next.offset = offset
	return next, nil
}

// builder applies a batch to a shallow copy of an image. Each map the batch
// writes is cloned on its first write, and each topic on its first change;
// what the builder cloned or created it owns and may change in place, which
// keeps a batch that creates a topic with thousands of partitions linear.
type builder struct {
	base   *Image
	img    *Image
	offset int64 // the batch's, a new registration's broker epoch

	topicsOwned        bool
	brokersOwned       bool
	topicConfigsOwned  bool
	brokerConfigsOwned bool
	clientMetricsOwned bool
	groupConfigsOwned  bool
	featuresOwned      bool
	aclsOwned          bool
	scramOwned         bool
	tokensOwned        bool
	quotasOwned        bool
	// ownedTopics and ownedConfigs are the topics and inner config maps
	// cloned or created in this batch.
	ownedTopics  map[model.TopicID]bool
	ownedConfigs map[configKey]bool
	// ownedQuotas are the entities whose inner quota map was cloned or
	// created in this batch.
	ownedQuotas map[QuotaEntity]bool
	// created are the names of topics created in this batch.
	created map[string]bool
}

type configKey struct {
	typ  ResourceType
	name string
}

func newBuilder(base *Image) *builder {
	next := *base
	return &builder{
		base: base, img: &next,
		ownedTopics: map[model.TopicID]bool{}, ownedConfigs: map[configKey]bool{}, created: map[string]bool{},
	}
}

func (b *builder) finish() *Image {
	if b.topicsOwned {
		b.img.sortedTopics = b.sortTopics()
	}
	return b.img
}

// sortTopics rebuilds the sorted topic list by walking the base image's list
// (dropping removed topics, taking changed ones from the new map) and merging
// in the few created names, so a batch costs O(topics), not a full sort.
func (b *builder) sortTopics() []*TopicImage {
	var added []*TopicImage
	for name := range b.created {
		if t, ok := b.img.topics[name]; ok {
			if _, existed := b.base.topics[name]; !existed {
				added = append(added, t)
			}
		}
	}
	slices.SortFunc(added, func(x, y *TopicImage) int { return strings.Compare(x.Name, y.Name) })
	out := make([]*TopicImage, 0, len(b.img.topics))
	i := 0
	for _, t := range b.base.sortedTopics {
		cur, ok := b.img.topics[t.Name]
		if !ok {
			continue
		}
		for i < len(added) && added[i].Name < t.Name {
			out = append(out, added[i])
			i++
		}
		out = append(out, cur)
	}
	return append(out, added[i:]...)
}

func (b *builder) apply(r Record) error {
	switch r := r.(type) {
	case ClusterRecord:
		return b.cluster(r)
	case BrokerRegistration:
		return b.registerBroker(r)
	case TopicRecord:
		return b.createTopic(r)
	case PartitionRecord:
		return b.setPartition(r)
	case PartitionChange:
		return b.changePartition(r)
	case ConfigRecord:
		return b.setConfig(r)
	case RemoveTopic:
		return b.removeTopic(r)
	case ProducerIDsRecord:
		return b.producerIDs(r)
	case FeatureLevel:
		return b.featureLevel(r)
	case BrokerFence:
		return b.fenceBroker(r)
	case BrokerUnregistration:
		return b.unregisterBroker(r)
	case BrokerRegistrationChange:
		return b.changeBroker(r)
	case AccessControlEntryRecord:
		return b.addACL(r)
	case RemoveAccessControlEntryRecord:
		return b.removeACL(r)
	case UserScramCredentialRecord:
		return b.setScramCredential(r)
	case RemoveUserScramCredentialRecord:
		return b.removeScramCredential(r)
	case DelegationTokenRecord:
		return b.setDelegationToken(r)
	case RemoveDelegationTokenRecord:
		return b.removeDelegationToken(r)
	case ClientQuotaRecord:
		return b.setClientQuota(r)
	}
	return fmt.Errorf("%w: record type %T", ErrInvalid, r)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func (b *builder) cluster(r ClusterRecord) error {
	switch {
	case r.ClusterID == "":
		return invalid("empty cluster id")
	case b.img.clusterID != "":
		return invalid("cluster id is already %s", b.img.clusterID)
	}
	b.img.clusterID = r.ClusterID
	return nil
}

func (b *builder) registerBroker(r BrokerRegistration) error {
	if r.NodeID < 0 {
		return invalid("broker id %d is negative", r.NodeID)
	}
	seen := map[string]bool{}
	for _, ep := range r.Endpoints {
		if seen[ep.Name] {
			return invalid("broker %d: listener %s registered twice", r.NodeID, ep.Name)
		}
		seen[ep.Name] = true
	}
	features := map[string]bool{}
	for _, f := range r.Features {
		switch {
		case f.Name == "" || f.Min < 0 || f.Max < f.Min:
			return invalid("broker %d: feature %q range %d-%d", r.NodeID, f.Name, f.Min, f.Max)
		case features[f.Name]:
			return invalid("broker %d: feature %s registered twice", r.NodeID, f.Name)
		}
		features[f.Name] = true
	}
	if !b.brokersOwned {
		b.img.brokers = maps.Clone(b.img.brokers)
		if b.img.brokers == nil {
			b.img.brokers = map[model.NodeID]BrokerImage{}
		}
		b.brokersOwned = true
	}
	epoch := r.Epoch
	if epoch == 0 {
		epoch = b.offset
	}
	var since int64
	if r.Fenced {
		since = r.FencedAtMs
		if have, ok := b.img.brokers[r.NodeID]; ok && have.Fenced {
			since = earlierKnown(have.FencedAtMs, since)
		}
	}
	b.img.brokers[r.NodeID] = BrokerImage{
		NodeID: r.NodeID, Incarnation: r.Incarnation, Rack: r.Rack, Endpoints: slices.Clone(r.Endpoints),
		Epoch: epoch, Fenced: r.Fenced, FencedAtMs: since, Features: slices.Clone(r.Features), LogDirs: slices.Clone(r.LogDirs),
	}
	return nil
}

// earlierKnown is the earlier of two times, 0 standing for unknown.
func earlierKnown(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

func (b *builder) changeBroker(r BrokerRegistrationChange) error {
	have, ok := b.img.brokers[r.NodeID]
	switch {
	case !ok:
		return invalid("broker %d is not registered", r.NodeID)
	case have.Epoch != r.Epoch:
		return invalid("broker %d: epoch %d is not its current %d", r.NodeID, r.Epoch, have.Epoch)
	}
	b.ownBrokers()
	have.LogDirs = slices.Clone(r.LogDirs)
	b.img.brokers[r.NodeID] = have
	return nil
}

func (b *builder) ownBrokers() {
	if !b.brokersOwned {
		b.img.brokers = maps.Clone(b.img.brokers)
		if b.img.brokers == nil {
			b.img.brokers = map[model.NodeID]BrokerImage{}
		}
		b.brokersOwned = true
	}
}

func (b *builder) fenceBroker(r BrokerFence) error {
	have, ok := b.img.brokers[r.NodeID]
	switch {
	case !ok:
		return invalid("broker %d is not registered", r.NodeID)
	case have.Epoch != r.Epoch:
		return invalid("broker %d: epoch %d is not its current %d", r.NodeID, r.Epoch, have.Epoch)
	}
	b.ownBrokers()
	switch {
	case !r.Fenced:
		have.FencedAtMs = 0
	case have.Fenced:
		have.FencedAtMs = earlierKnown(have.FencedAtMs, r.FencedAtMs)
	default:
		have.FencedAtMs = r.FencedAtMs
	}
	have.Fenced = r.Fenced
	b.img.brokers[r.NodeID] = have
	return nil
}

func (b *builder) unregisterBroker(r BrokerUnregistration) error {
	have, ok := b.img.brokers[r.NodeID]
	switch {
	case !ok:
		return invalid("broker %d is not registered", r.NodeID)
	case have.Epoch != r.Epoch:
		return invalid("broker %d: epoch %d is not its current %d", r.NodeID, r.Epoch, have.Epoch)
	}
	b.ownBrokers()
	delete(b.img.brokers, r.NodeID)
	return nil
}

func (b *builder) ownTopics() {
	if b.topicsOwned {
		return
	}
	b.img.topics = maps.Clone(b.img.topics)
	b.img.topicsByID = maps.Clone(b.img.topicsByID)
	if b.img.topics == nil {
		b.img.topics = map[string]*TopicImage{}
		b.img.topicsByID = map[model.TopicID]*TopicImage{}
	}
	b.topicsOwned = true
}

func (b *builder) createTopic(r TopicRecord) error {
	if r.Name == "" {
		return invalid("empty topic name")
	}
	if r.TopicID == (model.TopicID{}) {
		return invalid("topic %s: zero topic id", r.Name)
	}
	if t, ok := b.img.topics[r.Name]; ok {
		return invalid("topic %s already exists with id %s", r.Name, FormatUUID(t.ID))
	}
	if t, ok := b.img.topicsByID[r.TopicID]; ok {
		return invalid("topic id %s is already topic %s", FormatUUID(r.TopicID), t.Name)
	}
	b.ownTopics()
	t := &TopicImage{Name: r.Name, ID: r.TopicID}
	b.img.topics[r.Name] = t
	b.img.topicsByID[r.TopicID] = t
	b.ownedTopics[r.TopicID] = true
	b.created[r.Name] = true
	return nil
}

// mutableTopic returns a topic this batch may change in place.
func (b *builder) mutableTopic(id model.TopicID) (*TopicImage, error) {
	t, ok := b.img.topicsByID[id]
	if !ok {
		return nil, invalid("unknown topic id %s", FormatUUID(id))
	}
	if b.ownedTopics[id] {
		return t, nil
	}
	b.ownTopics()
	c := &TopicImage{Name: t.Name, ID: t.ID, Partitions: slices.Clone(t.Partitions)}
	b.img.topics[c.Name] = c
	b.img.topicsByID[c.ID] = c
	b.ownedTopics[id] = true
	return c, nil
}

func (b *builder) setPartition(r PartitionRecord) error {
	t, ok := b.img.topicsByID[r.TopicID]
	if !ok {
		return invalid("partition %d of unknown topic id %s", r.Partition, FormatUUID(r.TopicID))
	}
	if r.Partition < 0 || int(r.Partition) > len(t.Partitions) {
		return invalid("topic %s has %d partitions: cannot set partition %d", t.Name, len(t.Partitions), r.Partition)
	}
	if r.LeaderEpoch < 0 || r.PartitionEpoch < 0 {
		return invalid("%s-%d: negative epoch", t.Name, r.Partition)
	}
	if err := checkReplicas(r.Replicas, r.ISR, r.Leader); err != nil {
		return invalid("%s-%d: %v", t.Name, r.Partition, err)
	}
	if err := checkReassignment(r.Replicas, r.AddingReplicas, r.RemovingReplicas); err != nil {
		return invalid("%s-%d: %v", t.Name, r.Partition, err)
	}
	if len(r.Directories) != 0 && len(r.Directories) != len(r.Replicas) {
		return invalid("%s-%d: %d directories for %d replicas", t.Name, r.Partition, len(r.Directories), len(r.Replicas))
	}
	t, _ = b.mutableTopic(r.TopicID)
	p := PartitionImage{
		Partition: r.Partition, Leader: r.Leader, LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.PartitionEpoch,
		Replicas: slices.Clone(r.Replicas), ISR: slices.Clone(r.ISR),
		AddingReplicas: cloneOrNil(r.AddingReplicas), RemovingReplicas: cloneOrNil(r.RemovingReplicas),
		Directories: cloneOrNil(r.Directories),
	}
	if int(r.Partition) == len(t.Partitions) {
		t.Partitions = append(t.Partitions, p)
	} else {
		t.Partitions[r.Partition] = p
	}
	return nil
}

func (b *builder) changePartition(r PartitionChange) error {
	t, ok := b.img.topicsByID[r.TopicID]
	if !ok {
		return invalid("change of partition %d of unknown topic id %s", r.Partition, FormatUUID(r.TopicID))
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
		return invalid("topic %s has no partition %d", t.Name, r.Partition)
	}
	p := t.Partitions[r.Partition]
	dropsReplica := false
	if r.Replicas != nil {
		for _, old := range p.Replicas {
			dropsReplica = dropsReplica || !slices.Contains(r.Replicas, old)
		}
		if r.Directories == nil && len(p.Directories) > 0 {
			// Each kept replica keeps its directory; an added one has none.
			dirs := make([]string, len(r.Replicas))
			for i, id := range r.Replicas {
				dirs[i] = p.Directory(id)
			}
			p.Directories = dirs
		}
		p.Replicas = slices.Clone(r.Replicas)
	}
	if r.Directories != nil {
		if len(r.Directories) != len(p.Replicas) {
			return invalid("%s-%d: %d directories for %d replicas", t.Name, r.Partition, len(r.Directories), len(p.Replicas))
		}
		p.Directories = slices.Clone(r.Directories)
	}
	if r.ISR != nil {
		p.ISR = slices.Clone(r.ISR)
	}
	if r.AddingReplicas != nil {
		p.AddingReplicas = cloneOrNil(*r.AddingReplicas)
	}
	if r.RemovingReplicas != nil {
		p.RemovingReplicas = cloneOrNil(*r.RemovingReplicas)
	}
	if r.Leader != nil && *r.Leader != p.Leader {
		p.Leader = *r.Leader
		p.LeaderEpoch++
	} else if dropsReplica {
		p.LeaderEpoch++
	}
	p.PartitionEpoch++
	if err := checkReplicas(p.Replicas, p.ISR, p.Leader); err != nil {
		return invalid("%s-%d: %v", t.Name, r.Partition, err)
	}
	if err := checkReassignment(p.Replicas, p.AddingReplicas, p.RemovingReplicas); err != nil {
		return invalid("%s-%d: %v", t.Name, r.Partition, err)
	}
	t, _ = b.mutableTopic(r.TopicID)
	t.Partitions[r.Partition] = p
	return nil
}

// checkReplicas checks a partition's replica state: distinct non-negative
// replicas, an ISR drawn from them, and a leader in the ISR or none.
func checkReplicas(replicas, isr []model.NodeID, leader model.NodeID) error {
	if len(replicas) == 0 {
		return fmt.Errorf("no replicas")
	}
	for i, r := range replicas {
		if r < 0 {
			return fmt.Errorf("replica %d is negative", r)
		}
		if slices.Contains(replicas[:i], r) {
			return fmt.Errorf("replica %d listed twice", r)
		}
	}
	for i, r := range isr {
		if !slices.Contains(replicas, r) {
			return fmt.Errorf("isr member %d is not a replica", r)
		}
		if slices.Contains(isr[:i], r) {
			return fmt.Errorf("isr member %d listed twice", r)
		}
	}
	if leader != NoLeader && !slices.Contains(isr, leader) {
		return fmt.Errorf("leader %d is not in the isr", leader)
	}
	return nil
}

// checkReassignment checks a reassignment's replicas: each adding or
// removing replica is a replica, listed once, and none is both.
func checkReassignment(replicas, adding, removing []model.NodeID) error {
	for name, list := range map[string][]model.NodeID{"adding": adding, "removing": removing} {
		for i, r := range list {
			if !slices.Contains(replicas, r) {
				return fmt.Errorf("%s replica %d is not a replica", name, r)
			}
			if slices.Contains(list[:i], r) {
				return fmt.Errorf("%s replica %d listed twice", name, r)
			}
		}
	}
	for _, r := range adding {
		if slices.Contains(removing, r) {
			return fmt.Errorf("replica %d is both adding and removing", r)
		}
	}
	return nil
}

// cloneOrNil copies a list, keeping an empty one nil so images compare
// equal however the list was cleared.
func cloneOrNil[T any](ns []T) []T {
	if len(ns) == 0 {
		return nil
	}
	return slices.Clone(ns)
}

func (b *builder) setConfig(r ConfigRecord) error {
	if r.Name == "" {
		return invalid("empty config name")
	}
	var outer *map[string]map[string]string
	var owned *bool
	switch r.ResourceType {
	case ResourceTopic:
		if _, ok := b.img.topics[r.ResourceName]; !ok {
			return invalid("config %s of unknown topic %q", r.Name, r.ResourceName)
		}
		outer, owned = &b.img.topicConfigs, &b.topicConfigsOwned
	case ResourceBroker:
		if !validBrokerResource(r.ResourceName) {
			return invalid("broker config resource %q is neither a node id nor empty", r.ResourceName)
		}
		outer, owned = &b.img.brokerConfigs, &b.brokerConfigsOwned
	case ResourceClientMetrics:
		if r.ResourceName == "" {
			return invalid("client metrics config %s of a subscription without a name", r.Name)
		}
		outer, owned = &b.img.clientMetrics, &b.clientMetricsOwned
	case ResourceGroup:
		if r.ResourceName == "" {
			return invalid("group config %s of a group without an ID", r.Name)
		}
		outer, owned = &b.img.groupConfigs, &b.groupConfigsOwned
	default:
		return invalid("config %s of unsupported resource type %d", r.Name, r.ResourceType)
	}
	if !*owned {
		*outer = maps.Clone(*outer)
		if *outer == nil {
			*outer = map[string]map[string]string{}
		}
		*owned = true
	}
	key := configKey{r.ResourceType, r.ResourceName}
	inner := (*outer)[r.ResourceName]
	if !b.ownedConfigs[key] {
		inner = maps.Clone(inner)
		if inner == nil {
			inner = map[string]string{}
		}
		b.ownedConfigs[key] = true
	}
	if r.Value == nil {
		delete(inner, r.Name)
	} else {
		inner[r.Name] = *r.Value
	}
	if len(inner) == 0 {
		delete(*outer, r.ResourceName)
	} else {
		(*outer)[r.ResourceName] = inner
	}
	return nil
}

// validBrokerResource reports whether name is "" (cluster default) or a
// non-negative node ID in canonical decimal.
func validBrokerResource(name string) bool {
	if name == "" {
		return true
	}
	n, err := strconv.ParseInt(name, 10, 32)
	return err == nil && n >= 0 && strconv.FormatInt(n, 10) == name
}

func (b *builder) removeTopic(r RemoveTopic) error {
	t, ok := b.img.topicsByID[r.TopicID]
	if !ok {
		return invalid("remove of unknown topic id %s", FormatUUID(r.TopicID))
	}
	b.ownTopics()
	delete(b.img.topics, t.Name)
	delete(b.img.topicsByID, t.ID)
	delete(b.ownedTopics, t.ID)
	if _, ok := b.img.topicConfigs[t.Name]; ok {
		if !b.topicConfigsOwned {
			b.img.topicConfigs = maps.Clone(b.img.topicConfigs)
			b.topicConfigsOwned = true
		}
		delete(b.img.topicConfigs, t.Name)
		delete(b.ownedConfigs, configKey{ResourceTopic, t.Name})
	}
	return nil
}

func (b *builder) producerIDs(r ProducerIDsRecord) error {
	if r.NextProducerID <= b.img.nextProducerID {
		return invalid("next producer id %d is not above %d", r.NextProducerID, b.img.nextProducerID)
	}
	b.img.nextProducerID = r.NextProducerID
	return nil
}

func (b *builder) featureLevel(r FeatureLevel) error {
	if r.Name == "" || r.Level < 0 {
		return invalid("feature %q level %d", r.Name, r.Level)
	}
	if !b.featuresOwned {
		b.img.features = maps.Clone(b.img.features)
		if b.img.features == nil {
			b.img.features = map[string]int16{}
		}
		b.featuresOwned = true
	}
	if r.Level == 0 {
		delete(b.img.features, r.Name)
	} else {
		b.img.features[r.Name] = r.Level
	}
	return nil
}

func (b *builder) ownACLs() {
	if !b.aclsOwned {
		b.img.acls = maps.Clone(b.img.acls)
		if b.img.acls == nil {
			b.img.acls = map[ACLID]ACL{}
		}
		b.aclsOwned = true
	}
}

// addACL adds an ACL under a new ID. Two ACLs alike under two IDs are
// structurally fine (Kafka's replay takes them); the controller does not
// write them.
func (b *builder) addACL(r AccessControlEntryRecord) error {
	if r.ID == (ACLID{}) {
		return invalid("acl with a zero id")
	}
	if _, ok := b.img.acls[r.ID]; ok {
		return invalid("acl id %s already exists", r.ID)
	}
	b.ownACLs()
	b.img.acls[r.ID] = r.ACL
	return nil
}

func (b *builder) removeACL(r RemoveAccessControlEntryRecord) error {
	if _, ok := b.img.acls[r.ID]; !ok {
		return invalid("remove of unknown acl id %s", r.ID)
	}
	b.ownACLs()
	delete(b.img.acls, r.ID)
	return nil
}

func (b *builder) ownScram() {
	if !b.scramOwned {
		b.img.scram = maps.Clone(b.img.scram)
		if b.img.scram == nil {
			b.img.scram = map[ScramKey]ScramCredential{}
		}
		b.scramOwned = true
	}
}

// setScramCredential adds or replaces a user's credential for a
// mechanism. Its bytes are copied: the image must not share memory with a
// record its writer may reuse.
func (b *builder) setScramCredential(r UserScramCredentialRecord) error {
	switch {
	case r.Name == "":
		return invalid("scram credential of an empty user name")
	case r.Mechanism <= 0:
		return invalid("scram credential of %s: mechanism %d", r.Name, r.Mechanism)
	}
	b.ownScram()
	b.img.scram[ScramKey{User: r.Name, Mechanism: r.Mechanism}] = ScramCredential{
		Salt: slices.Clone(r.Salt), StoredKey: slices.Clone(r.StoredKey), ServerKey: slices.Clone(r.ServerKey),
		Iterations: r.Iterations,
	}
	return nil
}

func (b *builder) removeScramCredential(r RemoveUserScramCredentialRecord) error {
	k := ScramKey{User: r.Name, Mechanism: r.Mechanism}
	if _, ok := b.img.scram[k]; !ok {
		return invalid("remove of unknown scram credential of %s, mechanism %d", r.Name, r.Mechanism)
	}
	b.ownScram()
	delete(b.img.scram, k)
	return nil
}
