package broker

// Metadata (key 3), versions 0-13.
//
// Lists the brokers (each one's endpoint on the listener the client came
// in through), the cluster ID, the controller, and the requested topics
// (all when the list is null) with their partitions' leader, leader epoch,
// replicas and ISR. Topics may be named by ID from v10 (KIP-516); a topic
// ID is returned from v10.
//
// Auto-creation: a missing topic is created with the broker's defaults
// (an internal topic with its own settings) when auto.create.topics.enable
// is true and the request allows it (always before v4). As in Kafka, the
// creation runs in the background and the topic is answered
// LEADER_NOT_AVAILABLE with no partitions until it exists, so clients retry;
// a Metadata request right after DeleteTopics shows the deletion, not a
// topic recreated under it. An invalid name gets INVALID_TOPIC_EXCEPTION.
//
// All topics are asked for by a null list, or by an empty one at v0, as
// in Kafka.
//
// Authorization (authz.go), as Kafka's KafkaApis.handleTopicMetadataRequest:
// a listing of all topics leaves out those the principal may not DESCRIBE;
// a topic named in the request without DESCRIBE is
// TOPIC_AUTHORIZATION_FAILED whether or not it exists (named by ID: the
// ID is echoed and the name left null; an unknown ID is UNKNOWN_TOPIC_ID).
// Auto-creating a missing topic needs CREATE on the cluster or, failing
// that, on the topic, else TOPIC_AUTHORIZATION_FAILED.
//
// Authorized operations (KIP-430): the topic's (v8+) and the cluster's
// (v8-10) bitfields when asked for, else -2147483648; the cluster's is 0
// without DESCRIBE on the cluster, and a topic answered with an error has
// none. Without an authorizer they hold every operation the resource type
// supports, as Kafka's.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.Metadata, min: 0, max: 13, handle: typed(handleMetadata)})
}

func handleMetadata(b *Broker, c *conn, req *kmsg.MetadataRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	allTopics := req.Topics == nil || req.Version == 0 && len(req.Topics) == 0
	var creating map[string]bool
	var refused map[string]bool
	if !allTopics {
		refused = b.authorizeMetadataTopics(c, req, img)
		creating = b.autoCreateForMetadata(c, req, img, refused)
	}
	resp.ClusterID = kmsg.StringPtr(img.ClusterID())
	resp.ControllerID = b.clientControllerID(img)
	resp.Brokers = b.metadataBrokers(img, c.listener)
	if req.IncludeClusterAuthorizedOperations && req.Version <= 10 {
		resp.AuthorizedOperations = 0
		if b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
			resp.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeCluster, auth.ClusterName)
		}
	}
	if allTopics {
		for _, t := range img.Topics() {
			if b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Name) {
				resp.Topics = append(resp.Topics, b.metadataTopic(c, req, img, t))
			}
		}
		return resp, nil
	}
	for _, rt := range req.Topics {
		if name, ok := metadataTopicName(img, rt); ok && refused[name] {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.TopicID, mt.ErrorCode = rt.Topic, rt.TopicID, kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		if rt.Topic != nil && creating[*rt.Topic] {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.ErrorCode = rt.Topic, kerr.LeaderNotAvailable.Code
			mt.IsInternal = metadata.IsInternalTopic(*rt.Topic)
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		resp.Topics = append(resp.Topics, b.requestedTopic(c, req, img, rt))
	}
	return resp, nil
}

// metadataTopicName is the name of a topic the request names, by name or
// by a known ID.
func metadataTopicName(img *metadata.Image, rt kmsg.MetadataRequestTopic) (string, bool) {
	if rt.Topic != nil {
		return *rt.Topic, true
	}
	if t, ok := img.TopicByID(model.TopicID(rt.TopicID)); ok {
		return t.Name, true
	}
	return "", false
}

// authorizeMetadataTopics returns the topics named in the request that
// the principal may not DESCRIBE: nil without an authorizer, else a map
// auto-creation adds to.
func (b *Broker) authorizeMetadataTopics(c *conn, req *kmsg.MetadataRequest, img *metadata.Image) map[string]bool {
	if b.authorizer() == nil {
		return nil
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	refused := map[string]bool{}
	for _, rt := range req.Topics {
		if name, ok := metadataTopicName(img, rt); ok && !describe(name) {
			refused[name] = true
		}
	}
	return refused
}

func (b *Broker) requestedTopic(c *conn, req *kmsg.MetadataRequest, img *metadata.Image, rt kmsg.MetadataRequestTopic) kmsg.MetadataResponseTopic {
	var t *metadata.TopicImage
	var ok bool
	missing := kerr.UnknownTopicOrPartition.Code
	if rt.Topic == nil {
		t, ok = img.TopicByID(model.TopicID(rt.TopicID))
		missing = kerr.UnknownTopicID.Code
	} else {
		t, ok = img.Topic(*rt.Topic)
	}
	if ok {
		return b.metadataTopic(c, req, img, t)
	}
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic, mt.TopicID, mt.ErrorCode = rt.Topic, rt.TopicID, missing
	if rt.Topic != nil && !validTopicName(*rt.Topic) {
		mt.ErrorCode = kerr.InvalidTopicException.Code
	}
	return mt
}

func (b *Broker) metadataTopic(c *conn, req *kmsg.MetadataRequest, img *metadata.Image, t *metadata.TopicImage) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = kmsg.StringPtr(t.Name)
	mt.TopicID = t.ID
	mt.IsInternal = metadata.IsInternalTopic(t.Name)
	if req.IncludeTopicAuthorizedOperations {
		mt.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeTopic, t.Name)
	}
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Partition
		mp.Leader = int32(p.Leader)
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = nodes(p.Replicas)
		mp.ISR = nodes(p.ISR)
		mp.OfflineReplicas = offlineReplicas(img, p)
		if p.Leader == metadata.NoLeader {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// offlineReplicas lists the replicas on brokers that are not live
// (unregistered or fenced), as Kafka's metadata cache reports them; never
// nil, as Kafka's encoding has an empty array.
func (b *Broker) metadataBrokers(img *metadata.Image, listener string) []kmsg.MetadataResponseBroker {
	var out []kmsg.MetadataResponseBroker
	for _, br := range img.Brokers() {
		if br.Fenced {
			continue // clients must not be sent to a broker that leads nothing
		}
		for _, ep := range br.Endpoints {
			if ep.Name != listener {
				continue
			}
			mb := kmsg.NewMetadataResponseBroker()
			mb.NodeID, mb.Host, mb.Port = int32(br.NodeID), ep.Host, ep.Port
			if br.Rack != "" {
				mb.Rack = kmsg.StringPtr(br.Rack)
			}
			out = append(out, mb)
		}
	}
	if len(out) == 0 {
		// Not registered yet (or registered without this listener): the
		// client must still learn how to reach us.
		l := b.advertised(listener)
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.cfg.NodeID, l.Host, int32(l.Port)
		out = append(out, mb)
	}
	return out
}

// autoCreateForMetadata starts creating the requested topics that are
// missing, if the request and the broker allow it, and returns the names
// whose creation is in flight. As in Kafka, those are answered
// LEADER_NOT_AVAILABLE with no partitions, and the client's retry finds the
// topic; answering with the new partitions at once would make a Metadata
// request right after DeleteTopics (old versions always allow creation)
// look as if the deletion had not happened. A topic refused already is
// not created, nor one the principal may not CREATE, which is added to
// refused.
func (b *Broker) autoCreateForMetadata(c *conn, req *kmsg.MetadataRequest, img *metadata.Image, refused map[string]bool) map[string]bool {
	allowed := req.Version < 4 || req.AllowAutoTopicCreation
	if !allowed || !b.brokerConfig(img).Bool("auto.create.topics.enable") || b.createTopicsFn == nil {
		return nil
	}
	var missing []string
	for _, rt := range req.Topics {
		if rt.Topic == nil || !validTopicName(*rt.Topic) || *rt.Topic == metadata.ClusterMetadataTopic || refused[*rt.Topic] {
			continue
		}
		if _, ok := img.Topic(*rt.Topic); !ok {
			missing = append(missing, *rt.Topic)
		}
	}
	if len(missing) > 0 && !b.permitsCluster(c, kmsg.ACLOperationCreate) {
		create := b.authorizeEach(c, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic)
		missing = slices.DeleteFunc(missing, func(name string) bool {
			if create(name) {
				return false
			}
			refused[name] = true
			return true
		})
	}
	if len(missing) == 0 {
		return nil
	}
	b.autoCreate.Lock()
	defer b.autoCreate.Unlock()
	if b.autoCreate.inFlight == nil {
		b.autoCreate.inFlight = map[string]bool{}
	}
	var start []string
	creating := make(map[string]bool, len(missing))
	for _, name := range missing {
		creating[name] = true
		if !b.autoCreate.inFlight[name] {
			b.autoCreate.inFlight[name] = true
			start = append(start, name)
		}
	}
	if len(start) > 0 {
		b.tasks.Go(func(ctx context.Context) { b.autoCreateInBackground(ctx, start) })
	}
	return creating
}

// autoCreateTimeout bounds one background auto-creation.
const autoCreateTimeout = 30 * time.Second

// autoCreateInBackground creates topics for Metadata's auto-creation:
// internal topics with their own settings, as their coordinators would,
// others with the defaults.
func (b *Broker) autoCreateInBackground(ctx context.Context, names []string) {
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	defer func() {
		b.autoCreate.Lock()
		for _, n := range names {
			delete(b.autoCreate.inFlight, n)
		}
		b.autoCreate.Unlock()
	}()
	var plain []string
	var errs []error
	for _, n := range names {
		switch n {
		case metadata.ConsumerOffsetsTopic:
			errs = append(errs, b.ensureOffsetsTopic(ctx))
		case metadata.TransactionStateTopic:
			errs = append(errs, b.ensureTxnStateTopic(ctx))
		default:
			if !metadata.IsInternalTopic(n) {
				plain = append(plain, n)
			}
		}
	}
	if len(plain) > 0 {
		errs = append(errs, b.createTopicsFn(ctx, plain))
	}
	if err := errors.Join(errs...); err != nil {
		b.log.Info("auto topic creation failed", "topics", names, "err", err)
	}
}

// validTopicName is Kafka's rule: 1-249 of [a-zA-Z0-9._-], not "." or "..".
func validTopicName(s string) bool {
	if s == "" || len(s) > 249 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			return false
		}
	}
	return true
}

// clientControllerID is the controller ID clients are told: the active
// controller, which is a broker too (every node is combined), or, when it
// is not a live broker (an election, or it is fenced), this broker, as
// Kafka's brokers name a live broker for admin requests to go to.
func (b *Broker) clientControllerID(img *metadata.Image) int32 {
	if b.ctrl == nil {
		return b.cfg.NodeID
	}
	id := b.ctrl.ControllerID()
	if br, ok := img.Broker(id); ok && !br.Fenced {
		return int32(id)
	}
	return b.cfg.NodeID
}
