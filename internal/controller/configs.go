package controller

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// AlterConfigsResource is one resource of a legacy AlterConfigs request: its
// dynamic configs are replaced by Configs as a whole, so a config left out is
// deleted.
type AlterConfigsResource struct {
	Type metadata.ResourceType
	// Name is a topic name, or for a broker its node ID in decimal or ""
	// for the cluster-wide default.
	Name    string
	Configs map[string]*string
}

// IncrementalAlterConfigsResource is one resource of an
// IncrementalAlterConfigs request (KIP-339).
type IncrementalAlterConfigsResource struct {
	Type metadata.ResourceType
	Name string
	Ops  []config.AlterOp
}

// AlterConfigsResult is one resource's outcome, in the order of the request.
type AlterConfigsResult struct {
	Type         metadata.ResourceType
	Name         string
	ErrorCode    int16
	ErrorMessage string
}

// AlterConfigs replaces resources' dynamic configs (the legacy API, whose
// full-replace semantics Kafka kept for old clients). Topics must exist
// (UNKNOWN_TOPIC_OR_PARTITION); a nil value, a resource given twice or a
// broker config that may not be set there is INVALID_REQUEST; an unknown
// name or a bad value is INVALID_CONFIG.
func (c *Controller) AlterConfigs(ctx context.Context, resources []AlterConfigsResource, validateOnly bool) []AlterConfigsResult {
	keys := make([]resourceKey, len(resources))
	for i, r := range resources {
		keys[i] = resourceKey{r.Type, r.Name}
	}
	return c.alterConfigs(ctx, keys, validateOnly, func(i int, _ map[string]string) (map[string]string, *failure) {
		next := map[string]string{}
		for name, v := range resources[i].Configs {
			if v == nil {
				return nil, fail(kerr.InvalidRequest, "Null value not supported for config %s.", name)
			}
			next[name] = *v
		}
		return next, nil
	})
}

// IncrementalAlterConfigs applies SET, DELETE, APPEND and SUBTRACT to
// resources' dynamic configs, as internal/config's ApplyIncremental defines
// them, with the same error codes as AlterConfigs.
func (c *Controller) IncrementalAlterConfigs(ctx context.Context, resources []IncrementalAlterConfigsResource, validateOnly bool) []AlterConfigsResult {
	keys := make([]resourceKey, len(resources))
	for i, r := range resources {
		keys[i] = resourceKey{r.Type, r.Name}
	}
	return c.alterConfigs(ctx, keys, validateOnly, func(i int, current map[string]string) (map[string]string, *failure) {
		catalog := config.Topic
		switch resources[i].Type {
		case metadata.ResourceBroker:
			catalog = config.Broker
		case metadata.ResourceClientMetrics:
			catalog = config.ClientMetrics
		case metadata.ResourceGroup:
			catalog = config.Group
		}
		next, err := catalog.ApplyIncremental(current, resources[i].Ops)
		if err != nil {
			return nil, configFailure(err)
		}
		return next, nil
	})
}

type resourceKey struct {
	typ  metadata.ResourceType
	name string
}

// alterConfigs is the shared body of both alter APIs: next computes resource
// i's new configs from its current ones; every resource whose result checks
// out goes into one committed batch.
func (c *Controller) alterConfigs(ctx context.Context, keys []resourceKey, validateOnly bool,
	next func(i int, current map[string]string) (map[string]string, *failure)) []AlterConfigsResult {
	results := make([]AlterConfigsResult, len(keys))
	for i, k := range keys {
		results[i] = AlterConfigsResult{Type: k.typ, Name: k.name}
	}
	setResult := func(i int, f *failure) { results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message() }
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		for i := range results {
			setResult(i, proposeFailure(err))
		}
		return results
	}
	img := c.Image()
	seen := map[resourceKey]int{}
	for _, k := range keys {
		seen[k]++
	}
	var recs []metadata.Record
	var planned []int
	for i, k := range keys {
		if seen[k] > 1 {
			setResult(i, fail(kerr.InvalidRequest, "Duplicate resource."))
			continue
		}
		current, f := currentConfigs(img, k)
		if f != nil {
			setResult(i, f)
			continue
		}
		updated, f := next(i, current)
		if f == nil {
			f = c.checkConfigs(img, k, updated)
		}
		if f != nil {
			setResult(i, f)
			continue
		}
		recs = appendConfigRecords(recs, k.typ, k.name, current, updated)
		planned = append(planned, i)
	}
	if validateOnly || len(recs) == 0 {
		return results
	}
	// A change may allow what was not allowed before: with
	// unclean.leader.election.enable now true, a partition without a live
	// ISR member gets an out-of-sync leader in the same batch, as Kafka's
	// controller elects on that config change.
	if next, err := img.Apply(recs...); err == nil {
		recs = append(recs, c.elections(next, func(id model.NodeID) bool { return c.usable(next, id) }, nil)...)
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		for _, i := range planned {
			setResult(i, proposeFailure(err))
		}
	}
	return results
}

// currentConfigs checks that a resource can carry configs and returns the
// ones it has.
func currentConfigs(img *metadata.Image, k resourceKey) (map[string]string, *failure) {
	switch k.typ {
	case metadata.ResourceTopic:
		if _, ok := img.Topic(k.name); !ok {
			return nil, fail(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", k.name)
		}
		return img.TopicConfig(k.name), nil
	case metadata.ResourceBroker:
		if _, ok := parseBrokerResource(k.name); !ok {
			return nil, fail(kerr.InvalidRequest, "Invalid broker resource name %q: want a node id, or empty for the cluster default.", k.name)
		}
		return img.BrokerConfig(k.name), nil
	case metadata.ResourceClientMetrics:
		if k.name == "" {
			return nil, fail(kerr.InvalidRequest, "Subscription name can't be empty.")
		}
		return img.ClientMetricsConfig(k.name), nil
	case metadata.ResourceGroup:
		// Kafka's ControllerConfigurationValidator.validateGroupName. The
		// group need not exist: its configs are set before it is.
		if k.name == "" {
			return nil, fail(kerr.InvalidRequest, "Default group resources are not allowed.")
		}
		return img.GroupConfig(k.name), nil
	}
	return nil, fail(kerr.InvalidRequest, "Unsupported resource type %d.", k.typ)
}

// parseBrokerResource parses a broker resource name: a node ID, or "" (-1)
// for the cluster default.
func parseBrokerResource(name string) (model.NodeID, bool) {
	if name == "" {
		return -1, true
	}
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != name {
		return 0, false
	}
	return model.NodeID(n), true
}

// checkConfigs validates a resource's complete new config set. A topic's
// overrides must be supported by Samsa (config.CheckSupported) and resolve
// over the broker config; a broker's must be supported too, and
// settable at that level (Kafka's update modes) and, layered over the static
// config, still give a valid broker config, including the topic defaults
// that fall back to it. A client metrics subscription's must be one
// Kafka's ClientMetricsConfigs would take (config.ParseClientMetrics), a
// group's one Kafka's GroupConfig would (config.ValidateGroup).
func (c *Controller) checkConfigs(img *metadata.Image, k resourceKey, next map[string]string) *failure {
	if k.typ == metadata.ResourceClientMetrics {
		// Every config deleted deletes the subscription; what is left must
		// be a subscription Kafka would take.
		if _, err := config.ParseClientMetrics(k.name, next); err != nil {
			return configFailure(err)
		}
		return nil
	}
	if k.typ == metadata.ResourceGroup {
		// Bounded by this node's broker config, as Kafka's controller
		// validates group configs against its own.
		if err := config.ValidateGroup(c.brokerValues(img), next); err != nil {
			return configFailure(err)
		}
		return nil
	}
	if k.typ == metadata.ResourceTopic {
		if err := config.Topic.CheckSupported(next); err != nil {
			return configFailure(err)
		}
		resolved, err := config.ResolveTopic(c.brokerValues(img), next)
		if err != nil {
			return configFailure(err)
		}
		if metadata.IsInternalTopic(k.name) {
			if policy := resolved.List("cleanup.policy"); len(policy) != 1 || policy[0] != "compact" {
				return fail(kerr.InvalidConfig, "Internal topic %s must keep cleanup.policy=compact: a delete policy would drop the state its coordinator keeps there.", k.name)
			}
		}
		return nil
	}
	if err := config.Broker.ValidateDynamic(next, k.name != ""); err != nil {
		return configFailure(err)
	}
	perBroker, clusterDefault := img.BrokerConfig(nodeResource(c.cfg.NodeID)), img.BrokerConfig("")
	if k.name == "" {
		clusterDefault = next
	} else {
		// Another broker's static config is not known here; checking its
		// configs over this node's static config catches what can be caught.
		perBroker = next
	}
	if _, err := c.static.WithDynamic(perBroker, clusterDefault); err != nil {
		return configFailure(err)
	}
	return nil
}
