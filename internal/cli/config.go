package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configResource is an --entity-type of config describe|alter that is a
// config resource of DescribeConfigs (the others, users, clients and ips,
// are client quotas): its resource type and the source of the configs set
// on it, which describe lists without --all.
type configResource struct {
	typ kmsg.ConfigResourceType
	// dynamic is the source of what was set on a named resource; 0 lists
	// every config (broker loggers).
	dynamic kmsg.ConfigSource
	// singular names one resource in sentences, as kafka-configs.sh does.
	singular string
}

// configResources are the resource entity types, by kafka-configs.sh's
// names. client-metrics (KIP-714) goes to the cluster as resource type 16
// whether or not the cluster serves it; a cluster that does not answers
// with its error.
var configResources = map[string]configResource{
	"topics":         {typ: kmsg.ConfigResourceTypeTopic, dynamic: kmsg.ConfigSourceDynamicTopicConfig, singular: "topic"},
	"brokers":        {typ: kmsg.ConfigResourceTypeBroker, dynamic: kmsg.ConfigSourceDynamicBrokerConfig, singular: "broker"},
	"broker-loggers": {typ: kmsg.ConfigResourceTypeBrokerLogger, singular: "broker-logger"},
	"client-metrics": {typ: kmsg.ConfigResourceTypeClientMetrics, dynamic: kmsg.ConfigSourceClientMetricsConfig, singular: "client-metric"},
}

// configSourceName is a source as Kafka's Java ConfigEntry.ConfigSource
// names it, which is what kafka-configs.sh prints.
func configSourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceClientMetricsConfig:
		return "DYNAMIC_CLIENT_METRICS_CONFIG"
	case kmsg.ConfigSourceGroupConfig:
		return "DYNAMIC_GROUP_CONFIG"
	}
	return s.String()
}

func newConfigCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Describe and alter the configs of topics, brokers, broker loggers and client quotas",
		Long: `Describe and alter configs as kafka-configs.sh --describe|--alter does, for
--entity-type topics, brokers (an --entity-name broker ID, or
--entity-default for the cluster-wide default), broker-loggers (a broker's
log levels), client-metrics, and users, clients and ips, whose configs are
client quotas (the same as samsa quota).`,
	}
	conn.register(cmd)
	cmd.AddCommand(newConfigDescribe(&conn), newConfigAlter(&conn))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// configEntity is what the entity flags name: a resource type and its
// name ("" for the broker default, none for every resource of the type),
// or client quota entities.
type configEntity struct {
	typeName string
	resource *configResource
	name     *string
	quota    []quotaEntitySpec
}

// configEntity reads --entity-type, --entity-name and --entity-default
// (which quotaEntityFlags collects in order) as kafka-configs.sh does.
func (q *quotaEntityFlags) configEntity(cmd *cobra.Command, forAlter bool) (configEntity, error) {
	if len(q.types) == 0 {
		return configEntity{}, errors.New("give --entity-type: topics, brokers, broker-loggers, client-metrics, users, clients or ips")
	}
	first := q.types[0]
	if _, quota := quotaEntityTypes[first]; quota {
		specs, err := q.entity(cmd, forAlter)
		return configEntity{typeName: first, quota: specs}, err
	}
	r, ok := configResources[first]
	if !ok {
		return configEntity{}, fmt.Errorf("invalid --entity-type %q: want topics, brokers, broker-loggers, client-metrics, users, clients or ips", first)
	}
	switch {
	case len(q.types) > 1:
		return configEntity{}, fmt.Errorf("only users and clients may be given together; --entity-type %s takes one --entity-type", first)
	case len(q.names) > 1:
		return configEntity{}, errors.New("more --entity-name and --entity-default than --entity-type")
	case forAlter && len(q.names) == 0:
		return configEntity{}, fmt.Errorf("give --entity-name (or --entity-default) for the %s to alter", r.singular)
	}
	e := configEntity{typeName: first, resource: &r}
	if len(q.names) == 0 {
		return e, nil
	}
	name := q.names[0]
	switch {
	case name == nil && r.typ != kmsg.ConfigResourceTypeBroker:
		return configEntity{}, fmt.Errorf("--entity-default is for brokers (and users, clients and ips), not %s", first)
	case name == nil:
		e.name = new(string) // the cluster-wide default: resource name ""
		return e, nil
	case r.typ == kmsg.ConfigResourceTypeBroker || r.typ == kmsg.ConfigResourceTypeBrokerLogger:
		if _, err := strconv.ParseInt(*name, 10, 32); err != nil {
			return configEntity{}, fmt.Errorf("the entity name for %s must be a broker ID, found %q", first, *name)
		}
	case *name == "":
		return configEntity{}, errors.New("--entity-name is empty")
	}
	e.name = name
	return e, nil
}

// registerEntity adds the kafka-configs.sh entity flags.
func (q *quotaEntityFlags) registerEntity(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&q.types, "entity-type", nil,
		"topics, brokers, broker-loggers, client-metrics, users, clients or ips (users and clients may be given together)")
	f.Var(entityNameValue{q}, "entity-name", "the name of the entity of the --entity-type in the same position: a topic, a broker ID, a user...")
	def := f.VarPF(entityDefaultValue{q}, "entity-default", "", "the default entity of the --entity-type in the same position: the cluster-wide broker default, or a quota default")
	def.NoOptDefVal = "true"
}

// describedConfig is one config of config describe --json.
type describedConfig struct {
	Name      string          `json:"name"`
	Value     *string         `json:"value"`
	Source    string          `json:"source"`
	Sensitive bool            `json:"sensitive"`
	ReadOnly  bool            `json:"read_only"`
	Synonyms  []configSynonym `json:"synonyms"`
}

type configSynonym struct {
	Name   string  `json:"name"`
	Value  *string `json:"value"`
	Source string  `json:"source"`
}

// describedResource is one resource of config describe --json.
type describedResource struct {
	EntityType string            `json:"entity_type"`
	EntityName string            `json:"entity_name"`
	Configs    []describedConfig `json:"configs"`
}

func newConfigDescribe(conn *connection) *cobra.Command {
	var (
		entity quotaEntityFlags
		all    bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "describe --entity-type TYPE [--entity-name NAME | --entity-default] [--all]",
		Short: "Show the configs set on a topic, a broker, the broker default, a broker's loggers or client quotas",
		Long: `Show configs as kafka-configs.sh --describe does: what was set on the
resource, or with --all every config, each with its value, whether it is
sensitive, and its synonyms: every place a value is set, most precedent
first, with its source (DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG,
DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG,
DYNAMIC_BROKER_LOGGER_CONFIG). Without --entity-name, every topic, or
every broker and the broker default. users, clients and ips list client
quotas as samsa quota describe does.`,
		Example: `  samsa config describe --entity-type topics --entity-name orders
  samsa config describe --entity-type brokers --entity-name 1 --all
  samsa config describe --entity-type brokers --entity-default
  samsa config describe --entity-type broker-loggers --entity-name 1
  samsa config describe --entity-type users --entity-name alice`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := entity.configEntity(cmd, false)
			if err != nil {
				return err
			}
			if e.resource == nil {
				return describeQuotas(cmd, conn, e.quota, false, asJSON)
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			names, err := configResourceNames(cmd, conn, cl, e)
			if err != nil {
				return err
			}
			var described []describedResource
			for _, name := range names {
				d, err := describeConfigResource(cmd, conn, cl, e.typeName, *e.resource, name, all)
				if err != nil {
					return err
				}
				described = append(described, d)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), described)
			}
			return printConfigResources(cmd.OutOrStdout(), *e.resource, described, all)
		},
	}
	entity.registerEntity(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "every config, not only those set on the resource")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of text")
	return cmd
}

// configResourceNames lists the resources to describe: the one named, or
// every topic, or every broker and the broker default.
func configResourceNames(cmd *cobra.Command, conn *connection, cl *kgo.Client, e configEntity) ([]string, error) {
	if e.name != nil {
		return []string{*e.name}, nil
	}
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	adm := conn.adminFor(cl)
	switch e.resource.typ {
	case kmsg.ConfigResourceTypeTopic:
		tds, err := adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return nil, conn.reachErr(cmd, err)
		}
		return tds.Names(), nil
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		md, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return nil, conn.reachErr(cmd, err)
		}
		var out []string
		for _, b := range md.Brokers {
			out = append(out, strconv.Itoa(int(b.NodeID)))
		}
		if e.resource.typ == kmsg.ConfigResourceTypeBroker {
			out = append(out, "")
		}
		return out, nil
	}
	return nil, fmt.Errorf("give --entity-name: the %s to describe", e.resource.singular)
}

// describeConfigResource describes one resource with synonyms, keeping
// what was set on it unless all.
func describeConfigResource(cmd *cobra.Command, conn *connection, cl *kgo.Client, typeName string, r configResource, name string, all bool) (describedResource, error) {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = r.typ, name
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return describedResource{}, conn.reachErr(cmd, err)
	}
	if len(resp.Resources) != 1 {
		return describedResource{}, fmt.Errorf("%d answers from the cluster, want 1", len(resp.Resources))
	}
	res := resp.Resources[0]
	if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
		return describedResource{}, fmt.Errorf("%s: %s", configResourceText(r, name), kafkaReason(err, stringOrEmpty(res.ErrorMessage)))
	}
	dynamic := r.dynamic
	if r.typ == kmsg.ConfigResourceTypeBroker && name == "" {
		dynamic = kmsg.ConfigSourceDynamicDefaultBrokerConfig
	}
	d := describedResource{EntityType: typeName, EntityName: name, Configs: []describedConfig{}}
	for _, c := range res.Configs {
		if !all && dynamic != 0 && c.Source != dynamic {
			continue
		}
		dc := describedConfig{Name: c.Name, Value: c.Value, Source: configSourceName(c.Source), Sensitive: c.IsSensitive, ReadOnly: c.ReadOnly,
			Synonyms: []configSynonym{}}
		for _, s := range c.ConfigSynonyms {
			dc.Synonyms = append(dc.Synonyms, configSynonym{Name: s.Name, Value: s.Value, Source: configSourceName(s.Source)})
		}
		d.Configs = append(d.Configs, dc)
	}
	slices.SortFunc(d.Configs, func(a, b describedConfig) int { return strings.Compare(a.Name, b.Name) })
	return d, nil
}

func stringOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// configResourceText names a resource in a sentence: topic "orders",
// broker 1, the broker default.
func configResourceText(r configResource, name string) string {
	if r.typ == kmsg.ConfigResourceTypeBroker && name == "" {
		return "the broker default"
	}
	if r.typ == kmsg.ConfigResourceTypeTopic || r.typ == kmsg.ConfigResourceTypeClientMetrics {
		name = strconv.Quote(name)
	}
	return r.singular + " " + name
}

// printConfigResources prints as kafka-configs.sh --describe does.
func printConfigResources(out io.Writer, r configResource, described []describedResource, all bool) error {
	for _, d := range described {
		switch {
		case r.typ == kmsg.ConfigResourceTypeBroker && d.EntityName == "":
			fmt.Fprintf(out, "Default configs for %s in the cluster are:\n", d.EntityType)
		case all:
			fmt.Fprintf(out, "All configs for %s %s are:\n", r.singular, d.EntityName)
		default:
			fmt.Fprintf(out, "Dynamic configs for %s %s are:\n", r.singular, d.EntityName)
		}
		for _, c := range d.Configs {
			var syns []string
			for _, s := range c.Synonyms {
				syns = append(syns, s.Source+":"+s.Name+"="+orNull(s.Value))
			}
			if _, err := fmt.Fprintf(out, "  %s=%s sensitive=%t synonyms={%s}\n", c.Name, orNull(c.Value), c.Sensitive, strings.Join(syns, ", ")); err != nil {
				return err
			}
		}
	}
	return nil
}

func newConfigAlter(conn *connection) *cobra.Command {
	var (
		entity     quotaEntityFlags
		adds, dels []string
	)
	cmd := &cobra.Command{
		Use:   "alter --entity-type TYPE (--entity-name NAME | --entity-default) [--add-config k=v[,k=v]] [--delete-config k[,k]]",
		Short: "Set and delete the configs of a topic, a broker, the broker default, a broker's loggers or client quotas",
		Long: `Set and delete configs as kafka-configs.sh --alter does, with
IncrementalAlterConfigs: --add-config k1=v1,k2=[a,b] (a list value in
brackets) and --delete-config k1,k2, which reverts each to the value it
falls back to. A config to delete must be set on the resource. For
broker-loggers the configs are loggers and the values log levels (TRACE,
DEBUG, INFO, WARN, ERROR, OFF); deleting one puts it back to the root
logger's level. users, clients and ips alter client quotas as samsa quota
alter does.`,
		Example: `  samsa config alter --entity-type topics --entity-name orders --add-config retention.ms=86400000,cleanup.policy=[compact,delete]
  samsa config alter --entity-type brokers --entity-default --add-config log.retention.ms=3600000
  samsa config alter --entity-type brokers --entity-name 1 --delete-config log.segment.bytes
  samsa config alter --entity-type broker-loggers --entity-name 1 --add-config replication=DEBUG
  samsa config alter --entity-type users --entity-name alice --add-config producer_byte_rate=1048576`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := entity.configEntity(cmd, true)
			if err != nil {
				return err
			}
			if e.resource == nil {
				for _, k := range append(slices.Clone(adds), dels...) {
					if strings.HasPrefix(strings.TrimSpace(k), "SCRAM-SHA-") {
						return errors.New("SCRAM credentials are set with samsa user create and deleted with samsa user delete")
					}
				}
				return alterQuotas(cmd, conn, e.quota, adds, dels, false)
			}
			set, err := parseConfigAdds(adds)
			if err != nil {
				return err
			}
			deletes := parseQuotaDeletes(dels)
			if len(set) == 0 && len(deletes) == 0 {
				return errors.New("nothing to change: give --add-config or --delete-config")
			}
			for _, k := range deletes {
				if slices.ContainsFunc(set, func(kv [2]string) bool { return kv[0] == k }) {
					return fmt.Errorf("%s is both in --add-config and in --delete-config", k)
				}
			}
			return alterConfigResource(cmd, conn, e, set, deletes)
		},
	}
	entity.registerEntity(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&adds, "add-config", nil, "configs to set, k=v (repeatable, or comma-separated; a list value in brackets: k=[a,b])")
	f.StringArrayVar(&dels, "delete-config", nil, "configs to delete, by name (repeatable, or comma-separated)")
	return cmd
}

// alterConfigResource checks the deletes against what is set (for a
// broker logger, the adds too against the loggers there are), then sends
// one IncrementalAlterConfigs.
func alterConfigResource(cmd *cobra.Command, conn *connection, e configEntity, set [][2]string, deletes []string) error {
	cl, err := conn.client(cmd)
	if err != nil {
		return err
	}
	defer cl.Close()
	r, name := *e.resource, *e.name
	current, err := describeConfigResource(cmd, conn, cl, e.typeName, r, name, false)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, c := range current.Configs {
		have[c.Name] = true
	}
	var invalid []string
	for _, k := range deletes {
		if !have[k] {
			invalid = append(invalid, k)
		}
	}
	if r.typ == kmsg.ConfigResourceTypeBrokerLogger {
		for _, kv := range set {
			if !have[kv[0]] {
				invalid = append(invalid, kv[0])
			}
		}
		if len(invalid) > 0 {
			return fmt.Errorf("invalid broker logger(s): %s (see samsa config describe --entity-type broker-loggers --entity-name %s)", strings.Join(invalid, ","), name)
		}
	} else if len(invalid) > 0 {
		return fmt.Errorf("invalid config(s) to delete: %s is not set on %s", strings.Join(invalid, ","), configResourceText(r, name))
	}
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = r.typ, name
	for _, kv := range set {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = kv[0], kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(kv[1])
		rr.Configs = append(rr.Configs, c)
	}
	for _, k := range deletes {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = k, kmsg.IncrementalAlterConfigOpDelete
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("%d answers from the cluster, want 1", len(resp.Resources))
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		return fmt.Errorf("%s: %s", configResourceText(r, name), kafkaReason(err, stringOrEmpty(resp.Resources[0].ErrorMessage)))
	}
	if r.typ == kmsg.ConfigResourceTypeBroker && name == "" {
		fmt.Fprintf(cmd.OutOrStdout(), "Completed updating default config for %s in the cluster.\n", e.typeName)
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "Completed updating config for %s %s.\n", r.singular, name)
	}
	return nil
}

// parseConfigAdds reads --add-config as kafka-configs.sh does: pairs
// separated by commas outside square brackets, a value in brackets a list
// (the brackets dropped), each name once.
func parseConfigAdds(adds []string) ([][2]string, error) {
	var out [][2]string
	for _, arg := range adds {
		for _, pair := range splitOutsideBrackets(arg, ',') {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			kv := splitOutsideBrackets(pair, '=')
			if len(kv) != 2 || strings.TrimSpace(kv[0]) == "" {
				return nil, fmt.Errorf(`invalid --add-config %q: want key=value or key=[value1,value2]`, pair)
			}
			k := strings.TrimSpace(kv[0])
			v := strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(kv[1]))
			if slices.ContainsFunc(out, func(p [2]string) bool { return p[0] == k }) {
				return nil, fmt.Errorf("--add-config sets %s twice", k)
			}
			out = append(out, [2]string{k, v})
		}
	}
	return out, nil
}

// splitOutsideBrackets splits s at each sep that is not inside [...].
func splitOutsideBrackets(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth = max(depth-1, 0)
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
