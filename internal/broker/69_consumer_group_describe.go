package broker

// ConsumerGroupDescribe (key 69), versions 0-1 (KIP-848).
//
// Describes consumer-protocol groups: state, group and assignment epochs,
// the assignor, and each member's subscription, current and target
// assignment. A classic group, or an unknown one, gets GROUP_ID_NOT_FOUND
// as in Kafka. Authorized operations are not filled in: there are no ACLs.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.ConsumerGroupDescribe, min: 0, max: 1, handle: typed(handleConsumerGroupDescribe)})
}

func handleConsumerGroupDescribe(b *Broker, c *conn, req *kmsg.ConsumerGroupDescribeRequest) (kmsg.Response, error) {
	return b.groups.ConsumerGroupDescribe(b.tasks.Context(), req), nil
}
