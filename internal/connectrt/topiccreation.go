package connectrt

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
)

// topicCreation is KIP-158: a source connector's records may create their
// topics with settings of its own (topic.creation.default.* and named
// groups topic.creation.<group>.* with include/exclude regexes), when the
// worker's topic.creation.enable is true (the default).
type topicCreation struct {
	groups []creationGroup // named groups in order, then the default
	mu     sync.Mutex
	known  map[string]bool
}

type creationGroup struct {
	name        string
	include     []*regexp.Regexp
	exclude     []*regexp.Regexp
	partitions  int32
	replication int16
	configs     map[string]*string
}

const creationPrefix = "topic.creation."

// parseTopicCreation reads a connector's topic.creation.* settings; nil
// when it sets none (its topics are created, if at all, by the broker's
// auto-creation).
func parseTopicCreation(cfg map[string]string, groupNames []string) (*topicCreation, error) {
	def, err := creationGroupOf(cfg, "default", true)
	if err != nil || def == nil {
		if len(groupNames) > 0 && err == nil {
			return nil, fmt.Errorf("topic.creation.groups is set, but topic.creation.default.replication.factor and topic.creation.default.partitions are not: the default group is required")
		}
		return nil, err
	}
	tc := &topicCreation{known: map[string]bool{}}
	for _, g := range groupNames {
		if g == "default" {
			continue
		}
		cg, err := creationGroupOf(cfg, g, false)
		if err != nil {
			return nil, err
		}
		tc.groups = append(tc.groups, *cg)
	}
	tc.groups = append(tc.groups, *def)
	return tc, nil
}

func creationGroupOf(cfg map[string]string, name string, isDefault bool) (*creationGroup, error) {
	prefix := creationPrefix + name + "."
	g := &creationGroup{name: name, partitions: -1, replication: -1, configs: map[string]*string{}}
	rfRaw, hasRF := cfg[prefix+"replication.factor"]
	pRaw, hasP := cfg[prefix+"partitions"]
	any := false
	for k := range cfg {
		if strings.HasPrefix(k, prefix) {
			any = true
		}
	}
	if !any && isDefault {
		return nil, nil
	}
	if isDefault && (!hasRF || !hasP) {
		return nil, fmt.Errorf("%sreplication.factor and %spartitions are both required to create topics (KIP-158)", prefix, prefix)
	}
	if hasRF {
		n, err := strconv.Atoi(strings.TrimSpace(rfRaw))
		if err != nil || n == 0 || n < -1 {
			return nil, fmt.Errorf("Invalid value %s for configuration %sreplication.factor: Value must be -1 (the broker's default) or a positive number", rfRaw, prefix)
		}
		g.replication = int16(n)
	}
	if hasP {
		n, err := strconv.Atoi(strings.TrimSpace(pRaw))
		if err != nil || n == 0 || n < -1 {
			return nil, fmt.Errorf("Invalid value %s for configuration %spartitions: Value must be -1 (the broker's default) or a positive number", pRaw, prefix)
		}
		g.partitions = int32(n)
	}
	for k, v := range cfg {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		opt := strings.TrimPrefix(k, prefix)
		switch opt {
		case "replication.factor", "partitions":
		case "include", "exclude":
			if isDefault {
				return nil, fmt.Errorf("%s%s: the default group takes every topic no other group does; it has no %s", prefix, opt, opt)
			}
			for _, p := range strings.Split(v, ",") {
				re, err := regexp.Compile("^(?:" + strings.TrimSpace(p) + ")$")
				if err != nil {
					return nil, fmt.Errorf("%s%s: %q is not a valid regular expression: %w", prefix, opt, p, err)
				}
				if opt == "include" {
					g.include = append(g.include, re)
				} else {
					g.exclude = append(g.exclude, re)
				}
			}
		default:
			val := v
			g.configs[opt] = &val
		}
	}
	if !isDefault && len(g.include) == 0 {
		return nil, fmt.Errorf("%sinclude is required for topic creation group %s", prefix, name)
	}
	return g, nil
}

func (g creationGroup) matches(topic string) bool {
	if g.name == "default" {
		return true
	}
	in := false
	for _, re := range g.include {
		in = in || re.MatchString(topic)
	}
	for _, re := range g.exclude {
		if re.MatchString(topic) {
			return false
		}
	}
	return in
}

// ensure creates the topic by its group's settings the first time the task
// writes to it; a topic that exists is left as it is.
func (tc *topicCreation) ensure(ctx context.Context, admin *kadm.Client, topic string) error {
	if tc == nil {
		return nil
	}
	tc.mu.Lock()
	known := tc.known[topic]
	tc.mu.Unlock()
	if known {
		return nil
	}
	for _, g := range tc.groups {
		if !g.matches(topic) {
			continue
		}
		resp, err := admin.CreateTopic(ctx, g.partitions, g.replication, g.configs, topic)
		if err == nil && resp.Err != nil && !isTopicExists(resp.Err) {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("create topic %s (topic creation group %s): %w", topic, g.name, err)
		}
		break
	}
	tc.mu.Lock()
	tc.known[topic] = true
	tc.mu.Unlock()
	return nil
}
