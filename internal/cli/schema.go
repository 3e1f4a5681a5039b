package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/linediff"
	"github.com/samsa-io/samsa/pkg/serde"
)

// schemaCmd holds what every samsa schema subcommand shares.
type schemaCmd struct {
	reg     registryFlags
	timeout time.Duration
}

// call runs one subcommand's requests, fn, with the registry's client and a
// context bounded by --timeout (each request is bounded too, by the HTTP
// client).
func (s *schemaCmd) call(cmd *cobra.Command, fn func(context.Context, *sr.Client) error) error {
	cl, err := s.reg.client(s.timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), s.timeout)
	defer cancel()
	return fn(ctx, cl)
}

// newSchemaCommand manages a Schema Registry (Samsa's or Confluent's)
// over Confluent's REST API, through franz-go's sr client.
func newSchemaCommand() *cobra.Command {
	s := &schemaCmd{}
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Manage the schemas of a Schema Registry (Confluent's API)",
		Long: `Register, list, read, compare, check and delete schemas, and set
compatibility levels and modes, in a Schema Registry that speaks Confluent's
REST API: samsa registry, samsa serve with samsa.schema.registry.listener,
or Confluent's own.`,
	}
	RejectUnknownSubcommands(cmd)
	f := cmd.PersistentFlags()
	s.reg.register(f)
	f.DurationVar(&s.timeout, "timeout", defaultTimeout, "how long the command waits for the registry")
	cmd.AddCommand(
		s.registerCommand(), s.listCommand(), s.getCommand(), s.versionsCommand(), s.diffCommand(),
		s.checkCommand(), s.configCommand(), s.modeCommand(), s.deleteCommand(),
	)
	return cmd
}

// schemaInput is a schema read from flags: --schema-file, --type,
// --reference.
type schemaInput struct {
	file, typ string
	refs      []string
}

func (in *schemaInput) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&in.file, "schema-file", "", "file holding the schema's text (required)")
	f.StringVar(&in.typ, "type", "", "AVRO, JSON or PROTOBUF (default: from the file's extension, .json JSON, .proto PROTOBUF, else AVRO)")
	f.StringArrayVar(&in.refs, "reference", nil, "a schema reference name=subject:version (repeatable)")
}

func (in *schemaInput) schema() (sr.Schema, error) {
	text, err := readSchemaFile(in.file)
	if err != nil {
		return sr.Schema{}, err
	}
	typ, err := parseSchemaType(in.typ, in.file)
	if err != nil {
		return sr.Schema{}, err
	}
	refs, err := parseReferences(in.refs)
	if err != nil {
		return sr.Schema{}, err
	}
	return serde.Source{Type: typ, Text: text, References: refs}.RegistrySchema(), nil
}

func (s *schemaCmd) registerCommand() *cobra.Command {
	var in schemaInput
	var normalize, asJSON bool
	cmd := &cobra.Command{
		Use:   "register SUBJECT --schema-file FILE",
		Short: "Register a schema under a subject (or find it there already)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := in.schema()
			if err != nil {
				return err
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				if normalize {
					ctx = sr.WithParams(ctx, sr.Normalize)
				}
				id, err := cl.RegisterSchema(ctx, args[0], body, -1, -1)
				if err != nil {
					return s.reg.err(err)
				}
				found, err := cl.LookupSchema(ctx, args[0], body)
				if err != nil {
					return s.reg.err(err)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), map[string]any{"subject": args[0], "id": id, "version": found.Version})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "subject %q version %d: schema id %d\n", args[0], found.Version, id)
				return nil
			})
		},
	}
	in.register(cmd)
	cmd.Flags().BoolVar(&normalize, "normalize", false, "have the registry normalize the schema first")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {subject, id, version} as JSON")
	return cmd
}

func (s *schemaCmd) listCommand() *cobra.Command {
	var deleted, asJSON bool
	var prefix string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the subjects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				var params []sr.Param
				if deleted {
					params = append(params, sr.ShowDeleted)
				}
				if prefix != "" {
					params = append(params, sr.SubjectPrefix(prefix))
				}
				subjects, err := cl.Subjects(sr.WithParams(ctx, params...))
				if err != nil {
					return s.reg.err(err)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), append([]string{}, subjects...))
				}
				for _, sub := range subjects {
					fmt.Fprintln(cmd.OutOrStdout(), sub)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&deleted, "deleted", false, "include soft-deleted subjects")
	cmd.Flags().StringVar(&prefix, "prefix", "", "only subjects starting with this")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func (s *schemaCmd) getCommand() *cobra.Command {
	var version string
	var id int
	var asJSON, deleted bool
	cmd := &cobra.Command{
		Use:   "get SUBJECT [--version N|latest] | get --id N",
		Short: "Print a schema: a subject's version, or the schema of a global ID",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			byID := cmd.Flags().Changed("id")
			switch {
			case byID && len(args) > 0:
				return errors.New("give a subject or --id, not both")
			case !byID && len(args) == 0:
				return errors.New("give a subject (and --version) or --id")
			case byID && cmd.Flags().Changed("version"):
				return errors.New("--version needs a subject, not --id")
			case byID && id <= 0:
				return fmt.Errorf("invalid --id %d: must be positive", id)
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				if deleted {
					ctx = sr.WithParams(ctx, sr.ShowDeleted)
				}
				var got []sr.SubjectSchema
				var err error
				if byID {
					got, err = schemaByID(ctx, cl, id)
				} else {
					var v int
					if v, err = parseVersion(version); err != nil {
						return err
					}
					var ss sr.SubjectSchema
					ss, err = cl.SchemaByVersion(ctx, args[0], v)
					got = []sr.SubjectSchema{ss}
				}
				if err != nil {
					return s.reg.err(err)
				}
				if asJSON {
					if byID {
						return writeJSON(cmd.OutOrStdout(), got)
					}
					return writeJSON(cmd.OutOrStdout(), got[0])
				}
				printSchema(cmd.OutOrStdout(), got)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&version, "version", "latest", "the subject's version: a number or latest")
	cmd.Flags().IntVar(&id, "id", 0, "the schema's global ID")
	cmd.Flags().BoolVar(&deleted, "deleted", false, "find soft-deleted versions too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the registry's JSON")
	return cmd
}

// schemaByID is the schema of id with every subject and version holding
// it.
func schemaByID(ctx context.Context, cl *sr.Client, id int) ([]sr.SubjectSchema, error) {
	sch, err := cl.SchemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	uses, err := cl.SchemaVersionsByID(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]sr.SubjectSchema, 0, len(uses))
	for _, u := range uses {
		out = append(out, sr.SubjectSchema{Subject: u.Subject, Version: u.Version, ID: id, Schema: sch})
	}
	if len(out) == 0 {
		out = append(out, sr.SubjectSchema{ID: id, Schema: sch})
	}
	return out, nil
}

// printSchema prints where a schema is registered, then its text once.
func printSchema(out io.Writer, got []sr.SubjectSchema) {
	for _, ss := range got {
		fmt.Fprintf(out, "subject %q version %d: id %d, type %s\n", ss.Subject, ss.Version, ss.ID, ss.Type)
	}
	for _, r := range got[0].References {
		fmt.Fprintf(out, "reference %s=%s:%d\n", r.Name, r.Subject, r.Version)
	}
	fmt.Fprintln(out, prettySchema(got[0].Schema))
}

// prettySchema indents a JSON schema text (Avro, JSON Schema) for people
// and diffs; Protobuf text is printed as it is.
func prettySchema(s sr.Schema) string {
	if s.Type == sr.TypeProtobuf {
		return strings.TrimRight(s.Schema, "\n")
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s.Schema), "", "  "); err != nil {
		return s.Schema
	}
	return b.String()
}

func (s *schemaCmd) versionsCommand() *cobra.Command {
	var deleted bool
	cmd := &cobra.Command{
		Use:   "versions SUBJECT",
		Short: "List a subject's versions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				if deleted {
					ctx = sr.WithParams(ctx, sr.ShowDeleted)
				}
				versions, err := cl.SubjectVersions(ctx, args[0])
				if err != nil {
					return s.reg.err(err)
				}
				for _, v := range versions {
					fmt.Fprintln(cmd.OutOrStdout(), v)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&deleted, "deleted", false, "include soft-deleted versions")
	return cmd
}

func (s *schemaCmd) diffCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "diff SUBJECT V1 V2",
		Short: "Show how two versions of a subject differ, and whether V2 is compatible with V1 at the subject's level",
		Long: `Print a line diff of the two versions' schema texts (- lines only in V1,
+ lines only in V2), then the registry's compatibility verdict for V2 against
V1 at the subject's level (BACKWARD: V2 can read data written with V1;
FORWARD: V1 can read V2's; FULL: both), with its messages when not.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			v1, err := parseVersion(args[1])
			if err != nil {
				return err
			}
			v2, err := parseVersion(args[2])
			if err != nil {
				return err
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				old, err := cl.SchemaByVersion(ctx, args[0], v1)
				if err != nil {
					return s.reg.err(err)
				}
				cur, err := cl.SchemaByVersion(ctx, args[0], v2)
				if err != nil {
					return s.reg.err(err)
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "--- %s version %d (id %d)\n+++ %s version %d (id %d)\n", args[0], old.Version, old.ID, args[0], cur.Version, cur.ID)
				writeLineDiff(out, strings.Split(prettySchema(old.Schema), "\n"), strings.Split(prettySchema(cur.Schema), "\n"))
				level := sr.WithParams(ctx, sr.DefaultToGlobal)
				res := cl.Compatibility(level, args[0])[0]
				if res.Err != nil {
					return s.reg.err(res.Err)
				}
				verdict, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), args[0], old.Version, cur.Schema)
				if err != nil {
					return s.reg.err(err)
				}
				if verdict.Is {
					fmt.Fprintf(out, "compatible at level %s: version %d against version %d\n", res.Level, cur.Version, old.Version)
					return nil
				}
				fmt.Fprintf(out, "not compatible at level %s: version %d against version %d\n", res.Level, cur.Version, old.Version)
				writeMessages(out, verdict.Messages)
				return nil
			})
		},
	}
}

// writeMessages prints the registry's compatibility messages, indented
// under its verdict.
func writeMessages(out io.Writer, messages []string) {
	for _, m := range messages {
		fmt.Fprintln(out, "  "+m)
	}
}

// writeLineDiff prints a and b as a line diff: the longest common
// subsequence kept as "  " lines, the rest as "- " and "+ ".
func writeLineDiff(out io.Writer, a, b []string) {
	for _, l := range linediff.Diff(a, b) {
		fmt.Fprintln(out, l.Sign()+" "+l.Text)
	}
}

func (s *schemaCmd) checkCommand() *cobra.Command {
	var in schemaInput
	var version string
	cmd := &cobra.Command{
		Use:   "check SUBJECT --schema-file FILE",
		Short: "Check whether a schema is compatible with a subject, as registering it would",
		Long: `Ask the registry whether the schema is compatible with the subject at its
compatibility level: against the version --version names, or by default
against what the level names (the latest version, or every version for a
_TRANSITIVE level). Prints the verdict and the registry's messages; an
incompatible schema ends the command with an error (exit status 1).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := in.schema()
			if err != nil {
				return err
			}
			v := -2 // every version the level names
			if version != "" {
				if v, err = parseVersion(version); err != nil {
					return err
				}
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				verdict, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), args[0], v, body)
				if err != nil {
					return s.reg.err(err)
				}
				out := cmd.OutOrStdout()
				if verdict.Is {
					fmt.Fprintf(out, "compatible with subject %q\n", args[0])
					return nil
				}
				fmt.Fprintf(out, "not compatible with subject %q\n", args[0])
				writeMessages(out, verdict.Messages)
				return fmt.Errorf("the schema is not compatible with subject %q", args[0])
			})
		},
	}
	in.register(cmd)
	cmd.Flags().StringVar(&version, "version", "", "check against this version only (a number or latest)")
	return cmd
}

func (s *schemaCmd) configCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Get or set the compatibility level, global or a subject's"}
	RejectUnknownSubcommands(cmd)
	var level string
	set := &cobra.Command{
		Use:   "set [SUBJECT] --level LEVEL",
		Short: "Set the global level, or a subject's",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var lvl sr.CompatibilityLevel
			if err := lvl.UnmarshalText([]byte(strings.ToUpper(level))); err != nil || level == "" {
				return fmt.Errorf("invalid --level %q: want NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL or FULL_TRANSITIVE", level)
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				return s.printLevel(cmd, args, cl.SetCompatibility(ctx, sr.SetCompatibility{Level: lvl}, args...)[0])
			})
		},
	}
	set.Flags().StringVar(&level, "level", "", "the compatibility level (required)")
	get := &cobra.Command{
		Use:   "get [SUBJECT]",
		Short: "Print the global level, or a subject's (its own, else the global one)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				return s.printLevel(cmd, args, cl.Compatibility(sr.WithParams(ctx, sr.DefaultToGlobal), args...)[0])
			})
		},
	}
	cmd.AddCommand(get, set)
	return cmd
}

// printLevel prints the level res reports, for the subject in args or the
// global one.
func (s *schemaCmd) printLevel(cmd *cobra.Command, args []string, res sr.CompatibilityResult) error {
	if res.Err != nil {
		return s.reg.err(res.Err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s compatibility level: %s\n", scopeName(args), res.Level)
	return nil
}

// printMode prints the mode res reports, for the subject in args or the
// global one.
func (s *schemaCmd) printMode(cmd *cobra.Command, args []string, res sr.ModeResult) error {
	if res.Err != nil {
		return s.reg.err(res.Err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s mode: %s\n", scopeName(args), res.Mode)
	return nil
}

func scopeName(args []string) string {
	if len(args) == 0 {
		return "global"
	}
	return fmt.Sprintf("subject %q", args[0])
}

func (s *schemaCmd) modeCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "mode", Short: "Get or set the mode (READWRITE, READONLY, IMPORT), global or a subject's"}
	RejectUnknownSubcommands(cmd)
	var mode string
	var force bool
	set := &cobra.Command{
		Use:   "set [SUBJECT] --mode MODE",
		Short: "Set the global mode, or a subject's",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var m sr.Mode
			if err := m.UnmarshalText([]byte(strings.ToUpper(mode))); err != nil || mode == "" {
				return fmt.Errorf("invalid --mode %q: want READWRITE, READONLY or IMPORT", mode)
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				if force {
					ctx = sr.WithParams(ctx, sr.Force)
				}
				return s.printMode(cmd, args, cl.SetMode(ctx, m, args...)[0])
			})
		},
	}
	set.Flags().StringVar(&mode, "mode", "", "the mode (required)")
	set.Flags().BoolVar(&force, "force", false, "enter IMPORT even though subjects exist")
	get := &cobra.Command{
		Use:   "get [SUBJECT]",
		Short: "Print the global mode, or a subject's (its own, else the global one)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				return s.printMode(cmd, args, cl.Mode(sr.WithParams(ctx, sr.DefaultToGlobal), args...)[0])
			})
		},
	}
	cmd.AddCommand(get, set)
	return cmd
}

func (s *schemaCmd) deleteCommand() *cobra.Command {
	var version string
	var permanent bool
	cmd := &cobra.Command{
		Use:   "delete SUBJECT [--version N|latest] [--permanent]",
		Short: "Delete a subject, or one of its versions (soft, or --permanent after a soft delete)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			how := sr.SoftDelete
			if permanent {
				how = sr.HardDelete
			}
			return s.call(cmd, func(ctx context.Context, cl *sr.Client) error {
				kind := "soft-deleted"
				if permanent {
					kind = "permanently deleted"
				}
				if version == "" {
					versions, err := cl.DeleteSubject(ctx, args[0], how)
					if err != nil {
						return s.reg.err(err)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s subject %q: versions %s\n", kind, args[0], joinInts(versions))
					return nil
				}
				v, err := parseVersion(version)
				if err != nil {
					return err
				}
				if err := cl.DeleteSchema(ctx, args[0], v, how); err != nil {
					return s.reg.err(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s subject %q version %s\n", kind, args[0], version)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "delete only this version (a number or latest)")
	cmd.Flags().BoolVar(&permanent, "permanent", false, "delete for good what was soft-deleted")
	return cmd
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
