package config

// MirrorSourceConfig names the source cluster of a mirror topic: a
// read-only copy of a topic of another cluster that only mirror appends
// (Produce with model.MirrorAppendTag) write to, at the source's offsets
// (docs/DESIGN-mirror-topics.md). Empty, the default, is an ordinary topic;
// removing or emptying it promotes the mirror to one.
const MirrorSourceConfig = "samsa.mirror.source"

// samsaTopicEntries are the topic configs Kafka does not have.
func samsaTopicEntries() []*Entry {
	return []*Entry{
		{Name: MirrorSourceConfig, Type: TypeString, Default: "", Importance: Medium,
			Wired: "non-empty makes the topic a mirror topic: an ordinary Produce to it is refused with INVALID_REQUEST, and only a mirror append (Produce v9+ with Samsa's tagged field, by a principal allowed ClusterAction on the cluster) writes to it, keeping the source's offsets, gaps and timestamps; its log then takes offset gaps; emptying it promotes the topic to an ordinary one (broker/mirror_append.go, docs/DESIGN-mirror-topics.md)",
			Doc:   "Alias of the cluster this topic mirrors; non-empty makes the topic a read-only mirror written only by the mirror process at the source's offsets, empty (the default) an ordinary topic."},
	}
}
