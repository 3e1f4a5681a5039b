package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/model"
)

// The JSON of kafka-reassign-partitions.sh, read and written byte for byte
// as Kafka's tool does (ReassignPartitionsCommand.formatAsReassignmentJson
// and its parsers), so a plan made by either tool runs on the other.

// anyLogDir is Kafka's log_dirs entry for "wherever the broker puts it".
const anyLogDir = "any"

// reassignmentJSON is a reassignment plan: what --generate prints and
// --execute, --verify and --cancel read.
type reassignmentJSON struct {
	Version    int                     `json:"version"`
	Partitions []reassignmentPartition `json:"partitions"`
}

type reassignmentPartition struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs,omitempty"`
}

// topicsToMoveJSON is --generate's --topics-to-move-json-file.
type topicsToMoveJSON struct {
	Version int `json:"version"`
	Topics  []struct {
		Topic string `json:"topic"`
	} `json:"topics"`
}

// assignment maps partitions to replica lists.
type assignment map[model.TopicPartition][]int32

// sortedPartitions lists a's partitions by topic, then partition.
func (a assignment) sortedPartitions() []model.TopicPartition {
	out := make([]model.TopicPartition, 0, len(a))
	for tp := range a {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(x, y model.TopicPartition) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return int(x.Partition) - int(y.Partition)
	})
	return out
}

// formatReassignmentJSON is Kafka's formatAsReassignmentJson: version 1,
// partitions sorted by topic and partition, each with its log_dirs ("any"
// for every replica), compact, as Jackson writes it.
func formatReassignmentJSON(a assignment) string {
	doc := reassignmentJSON{Version: 1, Partitions: []reassignmentPartition{}}
	for _, tp := range a.sortedPartitions() {
		replicas := a[tp]
		dirs := make([]string, len(replicas))
		for i := range dirs {
			dirs[i] = anyLogDir
		}
		doc.Partitions = append(doc.Partitions, reassignmentPartition{Topic: tp.Topic, Partition: tp.Partition,
			Replicas: append([]int32{}, replicas...), LogDirs: dirs})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // Jackson does not escape <, > and &
	_ = enc.Encode(doc)      // nothing in it can fail to encode
	return strings.TrimSuffix(buf.String(), "\n")
}

// decodeLenient decodes data into v. A field v has no place for is
// ignored, as Kafka's tool ignores it, but said on warn: nothing a user
// writes is dropped silently.
func decodeLenient(data []byte, v any, warn io.Writer, what string) error {
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	err := strict.Decode(v)
	if err == nil {
		return nil
	}
	if !strings.Contains(err.Error(), "unknown field") {
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(warn, "warning: %s: %v: ignored, as kafka-reassign-partitions.sh ignores it\n", what, strings.TrimPrefix(err.Error(), "json: "))
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// parseReassignmentJSON reads a plan and checks it as Kafka's
// parseExecuteAssignmentArgs does: version 1 (or none), no partition
// twice, no replica list empty or with a broker twice, as many log_dirs
// as replicas. Moves between log directories (a log_dirs entry other
// than "any", AlterReplicaLogDirs) are refused: Samsa does not move
// replicas between directories.
func parseReassignmentJSON(data []byte, warn io.Writer, what string) (assignment, []model.TopicPartition, error) {
	var doc struct {
		Version    *int                    `json:"version"`
		Partitions []reassignmentPartition `json:"partitions"`
	}
	if err := decodeLenient(data, &doc, warn, what); err != nil {
		return nil, nil, err
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, nil, fmt.Errorf("%s: not supported version field value %d", what, *doc.Version)
	}
	out := assignment{}
	var order []model.TopicPartition
	var dupParts []string
	for _, p := range doc.Partitions {
		tp := model.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		if p.Topic == "" {
			return nil, nil, fmt.Errorf("%s: a partition without a topic", what)
		}
		if p.Replicas == nil {
			return nil, nil, fmt.Errorf("%s: %s has no replicas field", what, tp)
		}
		if len(p.Replicas) == 0 {
			return nil, nil, fmt.Errorf("%s: partition replica list cannot be empty (%s)", what, tp)
		}
		if p.LogDirs != nil && len(p.LogDirs) != len(p.Replicas) {
			return nil, nil, fmt.Errorf("%s: size of replicas list %v is different from size of log dirs list %v for partition %s",
				what, p.Replicas, p.LogDirs, tp)
		}
		for i, d := range p.LogDirs {
			if d != anyLogDir {
				return nil, nil, fmt.Errorf("%s: %s: log dir %q for replica %d: moving replicas between log directories is not supported (only %q)",
					what, tp, d, p.Replicas[i], anyLogDir)
			}
		}
		for i, r := range p.Replicas {
			if slices.Contains(p.Replicas[:i], r) {
				return nil, nil, fmt.Errorf("%s: partition replica lists may not contain duplicate entries: %s contains multiple entries for %d", what, tp, r)
			}
		}
		if _, dup := out[tp]; dup {
			dupParts = append(dupParts, tp.String())
			continue
		}
		out[tp] = p.Replicas
		order = append(order, tp)
	}
	if len(dupParts) > 0 {
		return nil, nil, fmt.Errorf("%s: partition reassignment contains duplicate topic partitions: %s", what, strings.Join(dupParts, ","))
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s: partition reassignment list cannot be empty", what)
	}
	return out, order, nil
}

// parseTopicsToMove reads --generate's topics, refusing a topic named twice
// as Kafka's tool does.
func parseTopicsToMove(data []byte, warn io.Writer, what string) ([]string, error) {
	var doc struct {
		Version *int `json:"version"`
		Topics  []struct {
			Topic string `json:"topic"`
		} `json:"topics"`
	}
	if err := decodeLenient(data, &doc, warn, what); err != nil {
		return nil, err
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, fmt.Errorf("%s: not supported version field value %d", what, *doc.Version)
	}
	var topics, dups []string
	for _, t := range doc.Topics {
		if t.Topic == "" {
			return nil, fmt.Errorf("%s: a topic entry without a topic", what)
		}
		if slices.Contains(topics, t.Topic) {
			dups = append(dups, t.Topic)
			continue
		}
		topics = append(topics, t.Topic)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("%s: list of topics to reassign contains duplicate entries: %s", what, strings.Join(dups, ","))
	}
	if len(topics) == 0 {
		return nil, errors.New(what + ": no topic to move")
	}
	return topics, nil
}

// parseBrokerList reads --broker-list 1,2,3, refusing a broker twice.
func parseBrokerList(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("--broker-list: %q is not a broker ID", f)
		}
		if slices.Contains(out, int32(id)) {
			return nil, fmt.Errorf("--broker-list: broker list contains duplicate entries: %d", id)
		}
		out = append(out, int32(id))
	}
	return out, nil
}
