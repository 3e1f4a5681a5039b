package transforms

import (
	"fmt"
	"regexp"

	"github.com/samsa-io/samsa/connect"
)

// TopicNameMatches is true for records whose whole topic matches pattern.
type topicNameMatches struct{ pattern *regexp.Regexp }

func topicNameMatchesConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "pattern", Type: connect.TypeString, Default: connect.NoDefault,
			Validator: composite{connect.NonEmptyString{}, regexValidator{}}, Importance: connect.Medium,
			Documentation: "A Java regular expression for matching against the name of a record's topic."})
}

func (p *topicNameMatches) Config() *connect.ConfigDef { return topicNameMatchesConfig() }

func (p *topicNameMatches) Configure(props map[string]string) error {
	c, err := parseConfig(topicNameMatchesConfig(), props)
	if err != nil {
		return err
	}
	if p.pattern, err = compileWhole(c.String("pattern")); err != nil {
		return fmt.Errorf("Invalid value %s for configuration pattern: entry must be a Java-compatible regular expression: %v", c.String("pattern"), err)
	}
	return nil
}

func (p *topicNameMatches) Test(r connect.Record) (bool, error) {
	return p.pattern.MatchString(r.Topic), nil
}

func (p *topicNameMatches) Close() error { return nil }

// HasHeaderKey is true for records with at least one header named name.
type hasHeaderKey struct{ name string }

func hasHeaderKeyConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.TypeString, Default: connect.NoDefault,
			Validator: connect.NonEmptyString{}, Importance: connect.Medium, Documentation: "The header name."})
}

func (p *hasHeaderKey) Config() *connect.ConfigDef { return hasHeaderKeyConfig() }

func (p *hasHeaderKey) Configure(props map[string]string) error {
	c, err := parseConfig(hasHeaderKeyConfig(), props)
	if err != nil {
		return err
	}
	p.name = c.String("name")
	return nil
}

func (p *hasHeaderKey) Test(r connect.Record) (bool, error) {
	_, ok := r.Headers.Last(p.name)
	return ok, nil
}

func (p *hasHeaderKey) Close() error { return nil }

// RecordIsTombstone is true for records whose value is null.
type recordIsTombstone struct{}

func (recordIsTombstone) Config() *connect.ConfigDef          { return connect.NewConfigDef() }
func (recordIsTombstone) Configure(map[string]string) error   { return nil }
func (recordIsTombstone) Test(r connect.Record) (bool, error) { return r.Value == nil, nil }
func (recordIsTombstone) Close() error                        { return nil }
