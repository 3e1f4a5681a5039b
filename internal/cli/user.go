package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// userPasswordEnv holds a new user's password when --password is not
// given.
const userPasswordEnv = "SAMSA_USER_PASSWORD"

// Kafka's bounds on SCRAM iterations (ScramMechanism's).
const (
	minScramIterations = 4096
	maxScramIterations = 16384
)

var scramMechanisms = []string{mechanismScramSHA256, mechanismScramSHA512}

func newUserCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Create, list and delete the SCRAM credentials of users on any Kafka cluster",
		Long: `Create, list and delete users' SCRAM credentials (SCRAM-SHA-256 and
SCRAM-SHA-512), as kafka-configs.sh --entity-type users --alter
--add-config 'SCRAM-SHA-256=[...]' does, over AlterUserScramCredentials and
DescribeUserScramCredentials (KIP-554). The password is salted here: the
cluster gets the salt and the salted password, never the password.`,
	}
	conn.register(cmd)
	cmd.AddCommand(newUserCreate(&conn), newUserList(&conn), newUserDelete(&conn))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// parseScramMechanism maps --mechanism to kadm's, in any case.
func parseScramMechanism(s string) (kadm.ScramMechanism, error) {
	switch m, _ := parseMechanism(s); m {
	case mechanismScramSHA256:
		return kadm.ScramSha256, nil
	case mechanismScramSHA512:
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("invalid --mechanism %q: want %s", s, oneOf(scramMechanisms))
}

// userErr names the user in an error.
func userErr(user string, err error, brokerMessage string) error {
	return fmt.Errorf("user %q: %s", user, kafkaReason(err, brokerMessage))
}

func newUserCreate(conn *connection) *cobra.Command {
	var (
		mechanism     string
		iterations    int32
		password      string
		passwordStdin bool
	)
	cmd := &cobra.Command{
		Use:   "create USER [--mechanism M] [--iterations N] [--password P | --password-stdin]",
		Short: "Set a user's SCRAM credential, creating the user or replacing the credential it had for the mechanism",
		Long: `Set a user's SCRAM credential for one mechanism, replacing the one it had.
The password comes from --password, else the environment variable
` + userPasswordEnv + `, else the first line of standard input with
--password-stdin (no prompt; the line break is not part of it). The last two
keep it out of shell history and process listings.`,
		Example: `  samsa user create alice --password-stdin < alice.pw
  SAMSA_USER_PASSWORD=alice-secret samsa user create alice --mechanism SCRAM-SHA-512 --iterations 8192`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			user := args[0]
			if user == "" {
				return errors.New("the user name is empty")
			}
			m, err := parseScramMechanism(mechanism)
			if err != nil {
				return err
			}
			if iterations < minScramIterations || iterations > maxScramIterations {
				return fmt.Errorf("invalid --iterations %d: Kafka takes %d to %d", iterations, minScramIterations, maxScramIterations)
			}
			pw, err := newUserPassword(cmd, password, passwordStdin)
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
			res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: iterations, Password: pw}})
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			r, ok := res[user]
			switch {
			case !ok:
				return fmt.Errorf("user %q: no answer from the cluster", user)
			case r.Err != nil:
				return userErr(user, r.Err, r.ErrMessage)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "set the %s credential of user %q (%d iterations)\n", m, user, iterations)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mechanism, "mechanism", mechanismScramSHA256, "the SCRAM mechanism: "+oneOf(scramMechanisms))
	f.Int32Var(&iterations, "iterations", minScramIterations, fmt.Sprintf("the SCRAM iteration count, %d to %d", minScramIterations, maxScramIterations))
	f.StringVar(&password, "password", "", "the password (env "+userPasswordEnv+" when the flag is not given)")
	f.BoolVar(&passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	return cmd
}

// newUserPassword picks the password: the flag, the environment, or a
// line of standard input.
func newUserPassword(cmd *cobra.Command, flag string, fromStdin bool) (string, error) {
	given := cmd.Flags().Changed("password")
	switch {
	case given && fromStdin:
		return "", errors.New("give --password or --password-stdin, not both")
	case given:
		if flag == "" {
			return "", errors.New("--password is empty")
		}
		return flag, nil
	case fromStdin:
		line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("--password-stdin: %w", err)
		}
		pw := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if pw == "" {
			return "", errors.New("--password-stdin: the first line of standard input is empty")
		}
		return pw, nil
	}
	if pw := os.Getenv(userPasswordEnv); pw != "" {
		return pw, nil
	}
	return "", fmt.Errorf("no password: give --password, set %s, or pass --password-stdin and write it to standard input", userPasswordEnv)
}

// credentialRow is one credential of user list.
type credentialRow struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

func newUserList(conn *connection) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [USER...]",
		Short: "List users' SCRAM credentials: mechanism and iterations (never a password or key)",
		RunE: func(cmd *cobra.Command, users []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			described, err := adm.DescribeUserSCRAMs(ctx, users...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			rows := []credentialRow{}
			var errs []error
			for _, d := range described.Sorted() {
				if d.Err != nil {
					errs = append(errs, describeUserErr(d))
					continue
				}
				for _, ci := range d.CredInfos {
					rows = append(rows, credentialRow{User: d.User, Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
				}
			}
			for _, u := range users {
				if _, ok := described[u]; !ok {
					errs = append(errs, fmt.Errorf("user %q: no answer from the cluster", u))
				}
			}
			slices.SortFunc(rows, func(a, b credentialRow) int {
				return strings.Compare(a.User+"\x00"+a.Mechanism, b.User+"\x00"+b.Mechanism)
			})
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, rows); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "USER\tMECHANISM\tITERATIONS")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%d\n", r.User, r.Mechanism, r.Iterations)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			return joinErrors(errs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// describeUserErr says that a user has no credential in plain words.
func describeUserErr(d kadm.DescribedUserSCRAM) error {
	if errors.Is(d.Err, kerr.ResourceNotFound) {
		return fmt.Errorf("user %q has no SCRAM credential", d.User)
	}
	return userErr(d.User, d.Err, d.ErrMessage)
}

func newUserDelete(conn *connection) *cobra.Command {
	var mechanism string
	cmd := &cobra.Command{
		Use:   "delete USER... [--mechanism M]",
		Short: "Delete users' SCRAM credentials: every one they have, or the one of --mechanism",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, users []string) error {
			var only kadm.ScramMechanism
			if cmd.Flags().Changed("mechanism") {
				m, err := parseScramMechanism(mechanism)
				if err != nil {
					return err
				}
				only = m
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			dels, errs, err := userDeletions(ctx, adm, users, only)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			// A request names a user once (Kafka refuses it twice), so a
			// user's credentials go in successive requests.
			for len(dels) > 0 {
				var batch, later []kadm.DeleteSCRAM
				seen := map[string]bool{}
				for _, d := range dels {
					if seen[d.User] {
						later = append(later, d)
						continue
					}
					seen[d.User] = true
					batch = append(batch, d)
				}
				res, err := adm.AlterUserSCRAMs(ctx, batch, nil)
				if err != nil {
					return joinErrors(append(errs, conn.reachErr(cmd, err)))
				}
				for _, d := range batch {
					r, ok := res[d.User]
					switch {
					case !ok:
						errs = append(errs, fmt.Errorf("user %q: no answer from the cluster", d.User))
					case errors.Is(r.Err, kerr.ResourceNotFound):
						errs = append(errs, fmt.Errorf("user %q has no %s credential", d.User, d.Mechanism))
					case r.Err != nil:
						errs = append(errs, userErr(d.User, r.Err, r.ErrMessage))
					default:
						fmt.Fprintf(out, "deleted the %s credential of user %q\n", d.Mechanism, d.User)
					}
				}
				dels = later
			}
			return joinErrors(errs)
		},
	}
	cmd.Flags().StringVar(&mechanism, "mechanism", "", "delete only this mechanism's credential: "+oneOf(scramMechanisms)+" (default: all of them)")
	return cmd
}

// userDeletions lists the credentials to delete: the users' credential of
// only, or, with only zero, every credential they have. Users without one
// are errors of their own; err is a request that failed as a whole.
func userDeletions(ctx context.Context, adm *kadm.Client, users []string, only kadm.ScramMechanism) (dels []kadm.DeleteSCRAM, errs []error, err error) {
	if only != 0 {
		for _, u := range users {
			dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: only})
		}
		return dels, nil, nil
	}
	described, err := adm.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range users {
		d, ok := described[u]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("user %q: no answer from the cluster", u))
		case d.Err != nil:
			errs = append(errs, describeUserErr(d))
		case len(d.CredInfos) == 0:
			errs = append(errs, fmt.Errorf("user %q has no SCRAM credential", u))
		}
		for _, ci := range d.CredInfos {
			dels = append(dels, kadm.DeleteSCRAM{User: u, Mechanism: ci.Mechanism})
		}
	}
	return dels, errs, nil
}
