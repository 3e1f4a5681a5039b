package transforms

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// RegexRouter renames the topic when the whole topic matches regex, to
// the replacement with $1-style groups (Java's Matcher.replaceFirst).
type regexRouter struct {
	whole       *regexp.Regexp // the topic must match all of it (matches())
	regex       *regexp.Regexp // then its first match is replaced (replaceFirst())
	replacement *javaReplacement
}

func regexRouterConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "regex", Type: connect.TypeString, Default: connect.NoDefault, Validator: regexValidator{},
			Importance: connect.High, Documentation: "Regular expression to use for matching."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Default: connect.NoDefault,
			Importance: connect.High, Documentation: "Replacement string."})
}

func (t *regexRouter) Config() *connect.ConfigDef { return regexRouterConfig() }

func (t *regexRouter) Configure(props map[string]string) error {
	c, err := parseConfig(regexRouterConfig(), props)
	if err != nil {
		return err
	}
	if t.whole, err = compileWhole(c.String("regex")); err != nil {
		return fmt.Errorf("Invalid value %s for configuration regex: Invalid regex: %v", c.String("regex"), err)
	}
	t.regex = regexp.MustCompile(c.String("regex"))
	// The replacement is checked now, where Java finds a bad group
	// reference only on the first matching record.
	if t.replacement, err = parseJavaReplacement(c.String("replacement"), t.regex); err != nil {
		return fmt.Errorf("Invalid value %s for configuration replacement: %v", c.String("replacement"), err)
	}
	return nil
}

// Apply replaces the first match, as Kafka's replaceFirst after
// matches(): with a lazy or alternating pattern the first match can be
// shorter than the topic ("(a|ab)" on "ab" replaces only "a").
func (t *regexRouter) Apply(r connect.Record) (connect.Record, bool, error) {
	if !t.whole.MatchString(r.Topic) {
		return r, true, nil
	}
	m := t.regex.FindStringSubmatchIndex(r.Topic)
	r.Topic = r.Topic[:m[0]] + t.replacement.expand(r.Topic, m) + r.Topic[m[1]:]
	return r, true, nil
}

func (t *regexRouter) Close() error { return nil }

// TimestampRouter renames the topic from topic.format, replacing
// ${topic} and ${timestamp} (the record's timestamp in timestamp.format,
// UTC).
type timestampRouter struct {
	topicFormat string
	format      *simpleDateFormat
}

func timestampRouterConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic.format", Type: connect.TypeString, Default: "${topic}-${timestamp}", Importance: connect.High,
			Documentation: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
		Define(connect.ConfigKey{Name: "timestamp.format", Type: connect.TypeString, Default: "yyyyMMdd", Importance: connect.High,
			Documentation: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})
}

func (t *timestampRouter) Config() *connect.ConfigDef { return timestampRouterConfig() }

func (t *timestampRouter) Configure(props map[string]string) error {
	c, err := parseConfig(timestampRouterConfig(), props)
	if err != nil {
		return err
	}
	t.topicFormat = c.String("topic.format")
	if t.format, err = newSimpleDateFormat(c.String("timestamp.format")); err != nil {
		return fmt.Errorf("Invalid value %s for configuration timestamp.format: %v", c.String("timestamp.format"), err)
	}
	return nil
}

func (t *timestampRouter) Apply(r connect.Record) (connect.Record, bool, error) {
	if r.Timestamp.IsZero() {
		return r, false, dataErrorf("Timestamp missing on record: %s", describeRecord(r))
	}
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	r.Topic = strings.ReplaceAll(topic, "${timestamp}", t.format.format(r.Timestamp))
	return r, true, nil
}

func (t *timestampRouter) Close() error { return nil }

// describeRecord names a record in errors without printing its data.
func describeRecord(r connect.Record) string {
	p := "null"
	if r.Partition != nil {
		p = fmt.Sprint(*r.Partition)
	}
	return fmt.Sprintf("record{topic='%s', kafkaPartition=%s}", r.Topic, p)
}
