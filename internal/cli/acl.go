package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The acl commands are kafka-acls.sh's --add, --list and --remove over
// CreateAcls, DescribeAcls and DeleteAcls. The flags have kafka-acls.sh's
// names and defaults: an ACL allows or denies principals (Type:Name) from
// hosts (* when none is named) an operation (All when none is named) on
// resources named literally or by prefix. create makes every combination
// of them, as kafka-acls.sh does. list and delete take the same flags as a
// filter, and a flag not given matches anything.

func newACLCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Create, list and delete ACLs on any Kafka cluster (kafka-acls.sh)",
		Long: `Create, list and delete ACLs, as kafka-acls.sh --add, --list and --remove do.
An ACL allows or denies a principal (Type:Name, e.g. User:alice) coming from
a host an operation on a resource: a topic, a group, the cluster or a
transactional ID, named literally or by prefix (--resource-pattern-type).
The cluster needs an authorizer (authorizer.class.name); without one it
answers every ACL request with SECURITY_DISABLED.`,
	}
	conn.register(cmd)
	cmd.AddCommand(newACLCreate(&conn), newACLList(&conn), newACLDelete(&conn))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// aclResourceFlags name the resources of ACLs.
type aclResourceFlags struct {
	topics  []string
	groups  []string
	txnIDs  []string
	cluster bool
	pattern string
}

func (r *aclResourceFlags) register(f *pflag.FlagSet, patterns string) {
	f.StringArrayVar(&r.topics, "topic", nil, "a topic (repeatable; * for every topic)")
	f.StringArrayVar(&r.groups, "group", nil, "a consumer group (repeatable; * for every group)")
	f.StringArrayVar(&r.txnIDs, "transactional-id", nil, "a transactional ID (repeatable; * for every one)")
	f.BoolVar(&r.cluster, "cluster", false, "the cluster")
	f.StringVar(&r.pattern, "resource-pattern-type", "literal", "how the resource names match: "+patterns)
}

func (r *aclResourceFlags) given() bool {
	return len(r.topics)+len(r.groups)+len(r.txnIDs) > 0 || r.cluster
}

// types are the resource types named.
func (r *aclResourceFlags) types() []kmsg.ACLResourceType {
	var out []kmsg.ACLResourceType
	for _, t := range []struct {
		typ   kmsg.ACLResourceType
		given bool
	}{
		{kmsg.ACLResourceTypeTopic, len(r.topics) > 0},
		{kmsg.ACLResourceTypeGroup, len(r.groups) > 0},
		{kmsg.ACLResourceTypeCluster, r.cluster},
		{kmsg.ACLResourceTypeTransactionalId, len(r.txnIDs) > 0},
	} {
		if t.given {
			out = append(out, t.typ)
		}
	}
	return out
}

// apply puts the resources into b; none means any resource.
func (r *aclResourceFlags) apply(b *kadm.ACLBuilder) {
	if !r.given() {
		b.AnyResource()
		return
	}
	b.MaybeTopics(r.topics...).MaybeGroups(r.groups...).MaybeTransactionalIDs(r.txnIDs...).MaybeClusters(r.cluster)
}

// patternType parses --resource-pattern-type among allowed.
func (r *aclResourceFlags) patternType(allowed ...string) (kadm.ACLPattern, error) {
	p, err := kmsg.ParseACLResourcePatternType(r.pattern)
	if err != nil || !slices.Contains(allowed, strings.ToLower(p.String())) {
		return 0, fmt.Errorf("invalid --resource-pattern-type %q: want %s", r.pattern, oneOf(allowed))
	}
	return p, nil
}

// aclEntryFlags name who an ACL is for and what it lets them do.
type aclEntryFlags struct {
	allow, deny           []string
	allowHosts, denyHosts []string
	principals            []string // list and delete: either permission
	operations            []string
}

func (e *aclEntryFlags) register(f *pflag.FlagSet, filter bool) {
	hosts := "* when a principal is given"
	ops := "default All"
	if filter {
		hosts, ops = "any when none is given", "default: any"
	}
	f.StringArrayVar(&e.allow, "allow-principal", nil, "a principal allowed, Type:Name such as User:alice (repeatable)")
	f.StringArrayVar(&e.deny, "deny-principal", nil, "a principal denied, Type:Name (repeatable)")
	f.StringArrayVar(&e.allowHosts, "allow-host", nil, "a host the allowed principals come from (repeatable; "+hosts+")")
	f.StringArrayVar(&e.denyHosts, "deny-host", nil, "a host the denied principals come from (repeatable; "+hosts+")")
	f.StringArrayVar(&e.operations, "operation", nil, "Read, Write, Create, Delete, Alter, Describe, ClusterAction, "+
		"DescribeConfigs, AlterConfigs, IdempotentWrite or All (repeatable; "+ops+")")
	if filter {
		f.StringArrayVar(&e.principals, "principal", nil, "a principal, allowed or denied, Type:Name (repeatable)")
	}
}

// checkPrincipals refuses a principal that is not Type:Name, as Kafka
// does, and hosts without principals.
func (e *aclEntryFlags) checkPrincipals() error {
	for _, set := range []struct {
		flag string
		ps   []string
	}{{"--allow-principal", e.allow}, {"--deny-principal", e.deny}, {"--principal", e.principals}} {
		for _, p := range set.ps {
			if t, n, ok := strings.Cut(p, ":"); !ok || t == "" || n == "" {
				return fmt.Errorf("invalid %s %q: want Type:Name, e.g. User:alice", set.flag, p)
			}
		}
	}
	if len(e.allowHosts) > 0 && len(e.allow)+len(e.principals) == 0 {
		return errors.New("--allow-host needs the principals it is for: --allow-principal")
	}
	if len(e.denyHosts) > 0 && len(e.deny)+len(e.principals) == 0 {
		return errors.New("--deny-host needs the principals it is for: --deny-principal")
	}
	return nil
}

// parsedOperations reads --operation; def when none is given, which is
// Any for a filter.
func (e *aclEntryFlags) parsedOperations(def kadm.ACLOperation) ([]kadm.ACLOperation, error) {
	if len(e.operations) == 0 {
		return []kadm.ACLOperation{def}, nil
	}
	var ops []kadm.ACLOperation
	for _, s := range e.operations {
		op, err := kmsg.ParseACLOperation(s)
		if err != nil || op == kmsg.ACLOperationUnknown || op > kmsg.ACLOperationIdempotentWrite {
			return nil, fmt.Errorf("invalid --operation %q: want Read, Write, Create, Delete, Alter, Describe, ClusterAction, "+
				"DescribeConfigs, AlterConfigs, IdempotentWrite or All", s)
		}
		if op == kmsg.ACLOperationAny && def != kmsg.ACLOperationAny {
			return nil, fmt.Errorf("invalid --operation %q: Any matches operations in list and delete, an ACL names one", s)
		}
		if !slices.Contains(ops, op) {
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// supportedOperations are the operations an ACL on a resource type may
// name, besides All (Kafka's AclEntry.supportedOperations, which
// kafka-acls.sh checks).
var supportedOperations = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	kmsg.ACLResourceTypeTopic: {kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeGroup: {kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeCluster: {kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeTransactionalId: {kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite},
}

func checkOperations(types []kmsg.ACLResourceType, ops []kadm.ACLOperation) error {
	for _, t := range types {
		for _, op := range ops {
			if op != kmsg.ACLOperationAll && !slices.Contains(supportedOperations[t], op) {
				names := make([]string, len(supportedOperations[t]))
				for i, o := range supportedOperations[t] {
					names[i] = o.String()
				}
				return fmt.Errorf("--operation %s does not apply to a %s: it takes %s or ALL", op, strings.ToLower(t.String()), strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// aclRow is one ACL as the commands print it; Error is the cluster's
// reason when the ACL could not be created or deleted.
type aclRow struct {
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
	Error        string `json:"error,omitempty"`
}

func newACLRow(rt kmsg.ACLResourceType, name string, pt kadm.ACLPattern, principal, host string,
	op kadm.ACLOperation, perm kmsg.ACLPermissionType, err error, msg string) aclRow {
	r := aclRow{ResourceType: rt.String(), ResourceName: name, PatternType: pt.String(), Principal: principal, Host: host,
		Operation: op.String(), Permission: perm.String()}
	if err != nil {
		r.Error = kafkaReason(err, msg)
	}
	return r
}

// sortACLs orders rows by resource, then principal, host, operation and
// permission, and drops repeats (an ACL several filters matched).
func sortACLs(rows []aclRow) []aclRow {
	slices.SortFunc(rows, func(a, b aclRow) int {
		return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName),
			cmp.Compare(a.PatternType, b.PatternType), cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Host, b.Host),
			cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission), cmp.Compare(a.Error, b.Error))
	})
	return slices.Compact(rows)
}

func printACLs(out io.Writer, rows []aclRow, withErrors bool) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "RESOURCE-TYPE\tRESOURCE-NAME\tPATTERN\tPRINCIPAL\tHOST\tOPERATION\tPERMISSION"
	if withErrors {
		header += "\tERROR"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", r.ResourceType, r.ResourceName, r.PatternType, r.Principal, r.Host, r.Operation, r.Permission)
		if withErrors {
			fmt.Fprintf(tw, "\t%s", dashIfEmpty(r.Error))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func newACLCreate(conn *connection) *cobra.Command {
	var (
		res   aclResourceFlags
		entry aclEntryFlags
	)
	cmd := &cobra.Command{
		Use:   "create (--allow-principal P | --deny-principal P)... RESOURCE... [--operation OP]...",
		Short: "Create ACLs: every principal, host, operation and resource given, combined (kafka-acls.sh --add)",
		Example: `  samsa acl create --allow-principal User:alice --operation Read --operation Describe --topic orders --group billing
  samsa acl create --allow-principal User:etl --operation Write --topic raw. --resource-pattern-type prefixed
  samsa acl create --deny-principal User:mallory --deny-host 10.0.0.9 --operation All --cluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(entry.allow)+len(entry.deny) == 0 {
				return errors.New("give the principals: --allow-principal or --deny-principal")
			}
			if !res.given() {
				return errors.New("give a resource: --topic, --group, --cluster or --transactional-id")
			}
			if err := entry.checkPrincipals(); err != nil {
				return err
			}
			pattern, err := res.patternType("literal", "prefixed")
			if err != nil {
				return err
			}
			ops, err := entry.parsedOperations(kmsg.ACLOperationAll)
			if err != nil {
				return err
			}
			if err := checkOperations(res.types(), ops); err != nil {
				return err
			}
			b := kadm.NewACLs().ResourcePatternType(pattern).Operations(ops...).
				MaybeAllow(entry.allow...).MaybeAllowHosts(entry.allowHosts...).
				MaybeDeny(entry.deny...).MaybeDenyHosts(entry.denyHosts...)
			res.apply(b)
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			results, err := adm.CreateACLs(ctx, b)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			rows := make([]aclRow, 0, len(results))
			failed := 0
			for _, r := range results {
				rows = append(rows, newACLRow(r.Type, r.Name, r.Pattern, r.Principal, r.Host, r.Operation, r.Permission, r.Err, r.ErrMessage))
				if r.Err != nil {
					failed++
				}
			}
			if err := printACLs(cmd.OutOrStdout(), sortACLs(rows), true); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d ACLs were not created (see ERROR)", failed, len(rows))
			}
			return nil
		},
	}
	res.register(cmd.Flags(), "literal or prefixed")
	entry.register(cmd.Flags(), false)
	return cmd
}

// aclFilter builds the filter of list and delete: what is not given
// matches anything.
func aclFilter(res *aclResourceFlags, entry *aclEntryFlags) (*kadm.ACLBuilder, error) {
	if err := entry.checkPrincipals(); err != nil {
		return nil, err
	}
	pattern, err := res.patternType("literal", "prefixed", "match", "any")
	if err != nil {
		return nil, err
	}
	ops, err := entry.parsedOperations(kmsg.ACLOperationAny)
	if err != nil {
		return nil, err
	}
	b := kadm.NewACLs().ResourcePatternType(pattern).Operations(ops...)
	res.apply(b)
	allow, deny := slices.Concat(entry.allow, entry.principals), slices.Concat(entry.deny, entry.principals)
	if len(allow)+len(deny) == 0 {
		return b.Allow().AllowHosts().Deny().DenyHosts(), nil
	}
	b.MaybeAllow(allow...).MaybeDeny(deny...)
	if len(entry.allowHosts) > 0 {
		b.MaybeAllowHosts(entry.allowHosts...)
	} else {
		b.AllowHosts()
	}
	if len(entry.denyHosts) > 0 {
		b.MaybeDenyHosts(entry.denyHosts...)
	} else {
		b.DenyHosts()
	}
	return b, nil
}

func newACLList(conn *connection) *cobra.Command {
	var (
		res    aclResourceFlags
		entry  aclEntryFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list [RESOURCE...] [--principal P]...",
		Short: "List ACLs, all of them or those on the resources and for the principals given (kafka-acls.sh --list)",
		Long: `List ACLs: all of them, or those the flags match. Resources are matched by
--resource-pattern-type: literal (the default, as in kafka-acls.sh: ACLs on
exactly the names given), prefixed, match (every ACL that applies to the
names: literal ones, the wildcard * and prefixes of them) or any. Without a
resource every ACL is listed, whatever its pattern.`,
		Example: `  samsa acl list
  samsa acl list --topic orders --resource-pattern-type match
  samsa acl list --principal User:alice --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !res.given() && !cmd.Flags().Changed("resource-pattern-type") {
				res.pattern = "any"
			}
			b, err := aclFilter(&res, &entry)
			if err != nil {
				return err
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			results, err := adm.DescribeACLs(ctx, b)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			rows := []aclRow{}
			for _, r := range results {
				if r.Err != nil {
					return fmt.Errorf("cannot list ACLs: %s", kafkaReason(r.Err, r.ErrMessage))
				}
				for _, d := range r.Described {
					rows = append(rows, newACLRow(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission, nil, ""))
				}
			}
			rows = sortACLs(rows)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			return printACLs(cmd.OutOrStdout(), rows, false)
		},
	}
	res.register(cmd.Flags(), "literal, prefixed, match or any (default literal with a resource, any without)")
	cmd.Flags().StringArrayVar(&entry.principals, "principal", nil, "only the ACLs of this principal, Type:Name (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

func newACLDelete(conn *connection) *cobra.Command {
	var (
		res   aclResourceFlags
		entry aclEntryFlags
	)
	cmd := &cobra.Command{
		Use:   "delete RESOURCE... [--allow-principal P | --deny-principal P | --principal P]... [--operation OP]...",
		Short: "Delete the ACLs on resources that match the flags, and print them (kafka-acls.sh --remove)",
		Long: `Delete the ACLs on the resources given (at least one, as kafka-acls.sh
--remove asks) that match the other flags, and print what was deleted. A flag
not given matches anything: without principals every ACL on the resources
goes, without --operation every operation, without hosts every host.
Resources are matched by --resource-pattern-type, literal by default.`,
		Example: `  samsa acl delete --topic orders
  samsa acl delete --topic orders --allow-principal User:alice --operation Read`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !res.given() {
				return errors.New("give the resources whose ACLs to delete: --topic, --group, --cluster or --transactional-id")
			}
			b, err := aclFilter(&res, &entry)
			if err != nil {
				return err
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			results, err := adm.DeleteACLs(ctx, b)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			rows := []aclRow{}
			var errs []error
			failed := 0
			for _, r := range results {
				if r.Err != nil {
					err := fmt.Errorf("cannot delete ACLs: %s", kafkaReason(r.Err, r.ErrMessage))
					if !slices.ContainsFunc(errs, func(e error) bool { return e.Error() == err.Error() }) {
						errs = append(errs, err) // each filter has the same answer
					}
					continue
				}
				for _, d := range r.Deleted {
					rows = append(rows, newACLRow(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission, d.Err, d.ErrMessage))
					if d.Err != nil {
						failed++
					}
				}
			}
			if len(errs) == 0 {
				if err := printACLs(cmd.OutOrStdout(), sortACLs(rows), true); err != nil {
					return err
				}
			}
			if failed > 0 {
				errs = append(errs, fmt.Errorf("%d of %d matching ACLs were not deleted (see ERROR)", failed, len(rows)))
			}
			return joinErrors(errs)
		},
	}
	res.register(cmd.Flags(), "literal, prefixed, match or any")
	entry.register(cmd.Flags(), true)
	return cmd
}
