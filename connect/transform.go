package connect

// Transformation is a Single Message Transform (Kafka's Transformation): it
// rewrites one record at a time, or drops it. The runtime applies a
// connector's chain (transforms=a,b) to each source record before
// conversion and to each sink record after it.
type Transformation interface {
	Config() *ConfigDef
	// Configure reads the transform's own props (the transforms.<name>.
	// prefix taken off); a bad config is an error naming the config.
	Configure(props map[string]string) error
	// Apply returns the changed record, or keep=false to drop it.
	Apply(r Record) (out Record, keep bool, err error)
	Close() error
}

// Predicate decides whether a transform applies to a record (KIP-585).
type Predicate interface {
	Config() *ConfigDef
	Configure(props map[string]string) error
	Test(r Record) (bool, error)
	Close() error
}

// TransformPlugin and PredicatePlugin name transforms and predicates by
// Kafka's class names (org.apache.kafka.connect.transforms.InsertField$Value
// ...) and aliases.
type TransformPlugin struct {
	Class   string
	Aliases []string
	Version string
	New     func() Transformation
}

type PredicatePlugin struct {
	Class   string
	Aliases []string
	Version string
	New     func() Predicate
}
