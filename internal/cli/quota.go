package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Client quota entity types: the names kafka-configs.sh takes for
// --entity-type, and the ones the protocol uses.
var quotaEntityTypes = map[string]string{
	"users": "user", "clients": "client-id", "ips": "ip",
	"user": "user", "client-id": "client-id", "ip": "ip",
}

func newQuotaCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Describe and alter client quotas on any Kafka cluster",
		Long: `Describe and alter the client quotas of users, client IDs, both, or IP
addresses, and the defaults of each, as kafka-configs.sh --entity-type
users|clients|ips does, over DescribeClientQuotas and AlterClientQuotas
(KIP-546). An entity is named with --entity-type and --entity-name or
--entity-default, in pairs and in order, or with the shortcuts --user,
--client, --ip and their --*-defaults.`,
	}
	conn.register(cmd)
	cmd.AddCommand(newQuotaDescribe(&conn), newQuotaAlter(&conn))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// quotaEntityFlags collects an entity from the command line. names holds
// the --entity-name and --entity-default values in the order given (nil
// for a default), so the nth pairs with the nth --entity-type, as in
// kafka-configs.sh.
type quotaEntityFlags struct {
	types []string
	names []*string
	// The shortcuts: a name, or true for the default.
	user, client, ip                      string
	userDefault, clientDefault, ipDefault bool
}

// entityNameValue appends each --entity-name to the shared list.
type entityNameValue struct{ f *quotaEntityFlags }

func (v entityNameValue) String() string { return "" }
func (v entityNameValue) Type() string   { return "string" }
func (v entityNameValue) Set(s string) error {
	v.f.names = append(v.f.names, &s)
	return nil
}

// entityDefaultValue appends a default to the shared list for each
// --entity-default.
type entityDefaultValue struct{ f *quotaEntityFlags }

func (v entityDefaultValue) String() string   { return "" }
func (v entityDefaultValue) Type() string     { return "bool" }
func (v entityDefaultValue) IsBoolFlag() bool { return true }
func (v entityDefaultValue) Set(s string) error {
	if s != "true" {
		return fmt.Errorf("takes no value")
	}
	v.f.names = append(v.f.names, nil)
	return nil
}

func (q *quotaEntityFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&q.types, "entity-type", nil, "users, clients or ips (repeatable: users and clients together)")
	f.Var(entityNameValue{q}, "entity-name", "the name of the entity of the --entity-type in the same position (repeatable)")
	def := f.VarPF(entityDefaultValue{q}, "entity-default", "", "the default entity of the --entity-type in the same position (repeatable)")
	def.NoOptDefVal = "true"
	f.StringVar(&q.user, "user", "", "a user principal's name: --entity-type users --entity-name NAME")
	f.BoolVar(&q.userDefault, "user-defaults", false, "the default user: --entity-type users --entity-default")
	f.StringVar(&q.client, "client", "", "a client ID: --entity-type clients --entity-name ID")
	f.BoolVar(&q.clientDefault, "client-defaults", false, "the default client ID: --entity-type clients --entity-default")
	f.StringVar(&q.ip, "ip", "", "an IP address: --entity-type ips --entity-name IP")
	f.BoolVar(&q.ipDefault, "ip-defaults", false, "the default IP: --entity-type ips --entity-default")
}

// quotaEntitySpec is one part of the entity the flags name: a type (the
// protocol's name), and a name, nil for the default or, in a describe,
// any for every name.
type quotaEntitySpec struct {
	typ  string
	name *string
	any  bool
}

// entity reads the flags, as kafka-configs.sh checks them: each type once,
// ips alone, no more names than types; with forAlter every type needs a
// name or default.
func (q *quotaEntityFlags) entity(cmd *cobra.Command, forAlter bool) ([]quotaEntitySpec, error) {
	fl := cmd.Flags()
	kafkaStyle := fl.Changed("entity-type") || fl.Changed("entity-name") || fl.Changed("entity-default")
	shortcuts := []struct {
		flag, def, typ string
		name           string
		isDefault      bool
	}{
		{"user", "user-defaults", "user", q.user, q.userDefault},
		{"client", "client-defaults", "client-id", q.client, q.clientDefault},
		{"ip", "ip-defaults", "ip", q.ip, q.ipDefault},
	}
	var specs []quotaEntitySpec
	for _, s := range shortcuts {
		named, def := fl.Changed(s.flag), fl.Changed(s.def) && s.isDefault
		switch {
		case named && def:
			return nil, fmt.Errorf("give --%s or --%s, not both", s.flag, s.def)
		case (named || def) && kafkaStyle:
			return nil, errors.New("--entity-type, --entity-name and --entity-default cannot be used with --user, --client or --ip and their defaults")
		case named:
			if s.name == "" {
				return nil, fmt.Errorf("--%s is empty: use --%s for the default", s.flag, s.def)
			}
			specs = append(specs, quotaEntitySpec{typ: s.typ, name: &s.name})
		case def:
			specs = append(specs, quotaEntitySpec{typ: s.typ})
		}
	}
	if !kafkaStyle {
		return specs, checkQuotaEntity(specs)
	}
	if len(q.names) > len(q.types) {
		return nil, errors.New("more --entity-name and --entity-default than --entity-type")
	}
	if forAlter && len(q.names) != len(q.types) {
		return nil, errors.New("--entity-name or --entity-default must be given with each --entity-type for alter")
	}
	for i, t := range q.types {
		typ, ok := quotaEntityTypes[t]
		if !ok {
			return nil, fmt.Errorf("invalid --entity-type %q: want users, clients or ips", t)
		}
		spec := quotaEntitySpec{typ: typ, any: i >= len(q.names)}
		if !spec.any {
			spec.name = q.names[i]
			if spec.name != nil && *spec.name == "" {
				return nil, errors.New("--entity-name is empty: use --entity-default for the default")
			}
		}
		specs = append(specs, spec)
	}
	return specs, checkQuotaEntity(specs)
}

func checkQuotaEntity(specs []quotaEntitySpec) error {
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.typ] {
			return fmt.Errorf("the entity type %s is given twice", s.typ)
		}
		seen[s.typ] = true
	}
	if seen["ip"] && len(seen) > 1 {
		return errors.New("ips cannot be combined with users or clients: only users and clients go together")
	}
	return nil
}

// describeQuotaEntity is an entity in words: user "alice" and the default
// client-id.
func describeQuotaEntity(e kadm.ClientQuotaEntity) string {
	var parts []string
	for _, p := range sortedQuotaParts(e) {
		if p.Name == nil {
			parts = append(parts, "the default "+p.Type)
		} else {
			parts = append(parts, p.Type+" "+strconv.Quote(*p.Name))
		}
	}
	return strings.Join(parts, " and ")
}

// quotaTypeRank orders entity types user, client-id, ip, then others.
func quotaTypeRank(typ string) int {
	switch typ {
	case "user":
		return 0
	case "client-id":
		return 1
	case "ip":
		return 2
	}
	return 3
}

// sortedQuotaParts lists an entity's parts user first, whatever order the
// cluster gave them in.
func sortedQuotaParts(e kadm.ClientQuotaEntity) kadm.ClientQuotaEntity {
	return slices.SortedStableFunc(slices.Values(e), func(a, b kadm.ClientQuotaEntityComponent) int {
		return cmp.Or(cmp.Compare(quotaTypeRank(a.Type), quotaTypeRank(b.Type)), strings.Compare(a.Type, b.Type))
	})
}

// quotaEntityText is an entity in a table: user=alice, client-id=<default>.
func quotaEntityText(e kadm.ClientQuotaEntity) string {
	var parts []string
	for _, p := range sortedQuotaParts(e) {
		name := "<default>"
		if p.Name != nil {
			name = *p.Name
		}
		parts = append(parts, p.Type+"="+name)
	}
	return strings.Join(parts, ", ")
}

// compareQuotaEntities orders entities those of a user first (the user
// alone before its client IDs), then client IDs, then IPs; the default
// before names.
func compareQuotaEntities(a, b kadm.ClientQuotaEntity) int {
	key := func(e kadm.ClientQuotaEntity) []string {
		k := []string{"", "", ""}
		first := 3
		for _, p := range e {
			r := quotaTypeRank(p.Type)
			if r > 2 {
				continue
			}
			first = min(first, r)
			k[r] = "\x01"
			if p.Name != nil {
				k[r] = "\x02" + *p.Name
			}
		}
		return append([]string{strconv.Itoa(first)}, k...)
	}
	return slices.Compare(key(a), key(b))
}

func formatQuotaValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// quotaRow is one entity of quota describe --json.
type quotaRow struct {
	// Entity maps each entity type to its name, null for the default.
	Entity map[string]*string `json:"entity"`
	Quotas map[string]float64 `json:"quotas"`
}

func newQuotaDescribe(conn *connection) *cobra.Command {
	var (
		entity    quotaEntityFlags
		openEnded bool
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "describe [--user U | --user-defaults] [--client C | --client-defaults] [--ip IP | --ip-defaults] [--open-ended]",
		Short: "List client quotas: every entity's, or those the entity flags select",
		Long: `List client quotas. Without entity flags, every entity's. With them, as
kafka-configs.sh --describe: each type named matches that name, each
default the type's default, and an --entity-type without a name any
entity of the type, its default included; entities with a type the flags
do not name are left out unless --open-ended is given (Kafka's
ClientQuotaFilter.contains instead of containsOnly).`,
		Example: `  samsa quota describe
  samsa quota describe --user alice
  samsa quota describe --entity-type users --entity-type clients --entity-name app
  samsa quota describe --user-defaults --open-ended`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			specs, err := entity.entity(cmd, false)
			if err != nil {
				return err
			}
			return describeQuotas(cmd, conn, specs, openEnded, asJSON)
		},
	}
	entity.register(cmd)
	cmd.Flags().BoolVar(&openEnded, "open-ended", false, "also list entities that have entity types the flags do not name")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// describeQuotas prints the quotas of the entities specs select (quota
// describe, and config describe for users, clients and ips).
func describeQuotas(cmd *cobra.Command, conn *connection, specs []quotaEntitySpec, openEnded, asJSON bool) error {
	adm, err := conn.admin(cmd)
	if err != nil {
		return err
	}
	defer adm.Close()
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	described, err := adm.DescribeClientQuotas(ctx, len(specs) > 0 && !openEnded, quotaFilter(specs))
	if err != nil {
		return quotaRequestErr(conn, cmd, err)
	}
	slices.SortFunc(described, func(a, b kadm.DescribedClientQuota) int { return compareQuotaEntities(a.Entity, b.Entity) })
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), quotaRows(described))
	}
	return printQuotas(cmd.OutOrStdout(), described)
}

// quotaFilter is the DescribeClientQuotas filter of an entity: EXACT for
// a name, DEFAULT for a default, ANY for a type without a name.
func quotaFilter(specs []quotaEntitySpec) []kadm.DescribeClientQuotaComponent {
	var comps []kadm.DescribeClientQuotaComponent
	for _, s := range specs {
		c := kadm.DescribeClientQuotaComponent{Type: s.typ, MatchName: s.name}
		switch {
		case s.any:
			c.MatchType = 2
		case s.name == nil:
			c.MatchType = 1
		}
		comps = append(comps, c)
	}
	return comps
}

// quotaRows are described quotas as quota describe --json prints them.
func quotaRows(described kadm.DescribedClientQuotas) []quotaRow {
	rows := []quotaRow{}
	for _, d := range described {
		r := quotaRow{Entity: map[string]*string{}, Quotas: map[string]float64{}}
		for _, p := range d.Entity {
			r.Entity[p.Type] = p.Name
		}
		for _, v := range d.Values {
			r.Quotas[v.Key] = v.Value
		}
		rows = append(rows, r)
	}
	return rows
}

// printQuotas prints described quotas as a table: an entity a line, its
// values sorted by key.
func printQuotas(out io.Writer, described kadm.DescribedClientQuotas) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTITY\tQUOTAS")
	for _, d := range described {
		values := map[string]float64{}
		for _, v := range d.Values {
			values[v.Key] = v.Value
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(values)) {
			kv = append(kv, k+"="+formatQuotaValue(values[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\n", quotaEntityText(d.Entity), strings.Join(kv, ", "))
	}
	return tw.Flush()
}

// quotaRequestErr words an error of a whole quota request; others pass
// through reachErr unchanged.
func quotaRequestErr(conn *connection, cmd *cobra.Command, err error) error {
	var em *kadm.ErrAndMessage
	if errors.As(err, &em) {
		return fmt.Errorf("the cluster refused the request: %s", kafkaReason(em.Err, em.ErrMessage))
	}
	var ae *kadm.AuthError
	if errors.As(err, &ae) {
		return fmt.Errorf("the cluster refused the request: %s", kafkaReason(ae.Err, ""))
	}
	return conn.reachErr(cmd, err)
}

// parseQuotaConfigs reads --add-config values: key=value pairs, given as
// repeated flags or comma-separated as kafka-configs.sh takes them.
func parseQuotaConfigs(adds []string) (map[string]float64, []string, error) {
	out := map[string]float64{}
	var order []string
	for _, arg := range adds {
		for _, kv := range strings.Split(arg, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case !ok || k == "":
				return nil, nil, fmt.Errorf("invalid --add-config %q: want key=value", kv)
			case v == "":
				return nil, nil, fmt.Errorf("invalid --add-config %q: the value is empty", kv)
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot parse quota configuration value for %s: %s", k, v)
			}
			if _, twice := out[k]; twice {
				return nil, nil, fmt.Errorf("--add-config sets %s twice", k)
			}
			out[k] = f
			order = append(order, k)
		}
	}
	return out, order, nil
}

func parseQuotaDeletes(dels []string) []string {
	var out []string
	for _, arg := range dels {
		for _, k := range strings.Split(arg, ",") {
			if k = strings.TrimSpace(k); k != "" && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// checkQuotaDeletes refuses to delete a key the entity has no value for,
// as kafka-configs.sh does ("Invalid config(s)"): the cluster would
// ignore the delete and say nothing.
func checkQuotaDeletes(ctx context.Context, adm *kadm.Client, specs []quotaEntitySpec, e kadm.ClientQuotaEntity, deletes []string) error {
	current, err := adm.DescribeClientQuotas(ctx, true, quotaFilter(specs))
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, d := range current {
		for _, v := range d.Values {
			have[v.Key] = true
		}
	}
	var missing []string
	for _, k := range deletes {
		if !have[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s has no %s quota to delete", describeQuotaEntity(e), strings.Join(missing, " or "))
	}
	return nil
}

func newQuotaAlter(conn *connection) *cobra.Command {
	var (
		entity       quotaEntityFlags
		adds, dels   []string
		validateOnly bool
	)
	cmd := &cobra.Command{
		Use:   "alter ENTITY FLAGS [--add-config k=v[,k=v]] [--delete-config k[,k]] [--validate-only]",
		Short: "Set and delete one entity's client quotas",
		Long: `Set and delete the client quotas of one entity, as kafka-configs.sh --alter
--add-config k=v --delete-config k does: a user, a client ID, both, or an IP,
or the default of any of them. The keys are Kafka's: producer_byte_rate,
consumer_byte_rate (bytes per second), request_percentage (of one request
handler thread), controller_mutation_rate (partitions per second) for users
and clients, connection_creation_rate (connections per second) for IPs. A
key to delete must be set. With --validate-only the cluster checks the
change and keeps nothing.`,
		Example: `  samsa quota alter --user alice --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152
  samsa quota alter --entity-type users --entity-default --entity-type clients --entity-name app --add-config request_percentage=50
  samsa quota alter --ip-defaults --add-config connection_creation_rate=10
  samsa quota alter --user alice --delete-config consumer_byte_rate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			specs, err := entity.entity(cmd, true)
			if err != nil {
				return err
			}
			return alterQuotas(cmd, conn, specs, adds, dels, validateOnly)
		},
	}
	entity.register(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&adds, "add-config", nil, "quotas to set, key=value (repeatable, or comma-separated)")
	f.StringArrayVar(&dels, "delete-config", nil, "quotas to delete, by key (repeatable, or comma-separated)")
	f.BoolVar(&validateOnly, "validate-only", false, "have the cluster check the change, and keep nothing")
	return cmd
}

// alterQuotas sets and deletes the quotas of the entity specs names
// (quota alter, and config alter for users, clients and ips).
func alterQuotas(cmd *cobra.Command, conn *connection, specs []quotaEntitySpec, adds, dels []string, validateOnly bool) error {
	if len(specs) == 0 {
		return errors.New("no entity: give --user, --client or --ip (or their --*-defaults), or --entity-type with --entity-name or --entity-default")
	}
	set, order, err := parseQuotaConfigs(adds)
	if err != nil {
		return err
	}
	deletes := parseQuotaDeletes(dels)
	if len(order) == 0 && len(deletes) == 0 {
		return errors.New("nothing to change: give --add-config or --delete-config")
	}
	for _, k := range deletes {
		if _, ok := set[k]; ok {
			return fmt.Errorf("%s is both in --add-config and in --delete-config", k)
		}
	}
	var e kadm.ClientQuotaEntity
	for _, s := range specs {
		e = append(e, kadm.ClientQuotaEntityComponent{Type: s.typ, Name: s.name})
	}
	adm, err := conn.admin(cmd)
	if err != nil {
		return err
	}
	defer adm.Close()
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	if len(deletes) > 0 {
		if err := checkQuotaDeletes(ctx, adm, specs, e, deletes); err != nil {
			return quotaRequestErr(conn, cmd, err)
		}
	}
	entry := kadm.AlterClientQuotaEntry{Entity: e}
	var changes []string
	for _, k := range order {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Value: set[k]})
		changes = append(changes, "set "+k+"="+formatQuotaValue(set[k]))
	}
	for _, k := range deletes {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
		changes = append(changes, "deleted "+k)
	}
	alter := adm.AlterClientQuotas
	if validateOnly {
		alter = adm.ValidateAlterClientQuotas
	}
	res, err := alter(ctx, []kadm.AlterClientQuotaEntry{entry})
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	if len(res) != 1 {
		return fmt.Errorf("%s: %d answers from the cluster, want 1", describeQuotaEntity(e), len(res))
	}
	if res[0].Err != nil {
		return fmt.Errorf("%s: %s", describeQuotaEntity(e), kafkaReason(res[0].Err, res[0].ErrMessage))
	}
	verb := "altered"
	if validateOnly {
		verb = "validated (nothing changed)"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s the quotas of %s: %s\n", verb, describeQuotaEntity(e), strings.Join(changes, ", "))
	return nil
}
