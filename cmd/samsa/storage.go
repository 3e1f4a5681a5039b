package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/cli"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/vfs"
)

func newStorage() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Format this node's log directories (meta.properties), as kafka-storage.sh does",
	}
	cmd.AddCommand(newStorageFormat(), newStorageRandomUUID())
	cli.RejectUnknownSubcommands(cmd)
	return cmd
}

func newStorageFormat() *cobra.Command {
	var (
		conf  configFlags
		opts  broker.FormatOptions
		scram []string
	)
	cmd := &cobra.Command{
		Use:   "format --config server.properties --cluster-id ID",
		Short: "Write meta.properties (cluster.id, node.id, directory.id) into every log directory",
		Long: `Format the node's directories as kafka-storage.sh format does: write
meta.properties, with the cluster ID, node.id and a directory ID of its own,
into every log directory (log.dirs, else log.dir) and the metadata log
directory (metadata.log.dir), creating them. The directories are the ones
samsa serve would open with the same --config, flags and --override.

Every node of a cluster is formatted with the same cluster ID; samsa storage
random-uuid draws one. A node configured as part of a quorum
(controller.quorum.voters or controller.quorum.bootstrap.servers) starts only
on formatted directories; a single node formats itself on first start.

A directory formatted already makes the command fail before it writes
anything, unless --ignore-formatted, which formats the others; a directory
formatted for another cluster or node fails it either way.

A quorum found through controller.quorum.bootstrap.servers (KIP-853) is
bootstrapped from a voter set stored at format time in the metadata log
directory: --standalone makes this node the only initial voter, at its
controller listener; --initial-controllers names the voters as
id@host:port:directory-id entries, the same on every node, and this node's
metadata log directory takes the directory ID its entry names. A controller
with bootstrap servers and no controller.quorum.voters needs one of these or
--no-initial-controllers, which stores no voter set: such a controller
cannot start yet, as joining the quorum as a new voter (AddRaftVoter) is not
built. Neither --standalone nor --initial-controllers goes with
controller.quorum.voters.

--add-scram adds a user's SCRAM credential, in kafka-storage.sh's syntax, to
the metadata the first start writes, so that SCRAM logins work from the
start (a cluster whose only listeners ask for SCRAM cannot get its first
user any other way). It is repeatable, and needs an unformatted metadata log
directory. Only the salt and the keys derived from the password are stored.
Components are split at commas, so a password cannot hold one; a value may
be quoted with double quotes:
  MECHANISM=[name=NAME,password=PASSWORD]                SCRAM-SHA-256 or SCRAM-SHA-512
  MECHANISM=[name=NAME,salt=B64,saltedpassword=B64]      salted already (base64)
  ...,iterations=N]                                      4096 to 16384, default 4096
  ...,salt=B64]                                          default: drawn at random`,
		Example: `  samsa storage format --config server.properties --cluster-id "$(samsa storage random-uuid)"
  samsa storage format --config controller.properties --cluster-id "$ID" \
    --initial-controllers "1@c1:9093:$(samsa storage random-uuid),2@c2:9093:$(samsa storage random-uuid),3@c3:9093:$(samsa storage random-uuid)"
  samsa storage format --config server.properties --cluster-id "$ID" \
    --add-scram 'SCRAM-SHA-256=[name=admin,password=admin-secret]'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ov, err := conf.given(cmd)
			if err != nil {
				return err
			}
			values, err := broker.LoadConfig(conf.propsPath, ov)
			if err != nil {
				return err
			}
			creds := make([]metadata.UserScramCredentialRecord, len(scram))
			for i, arg := range scram {
				if creds[i], err = metaprops.ParseAddScram(arg); err != nil {
					return err
				}
			}
			opts.Now = time.Now()
			done, err := broker.FormatStorageWithScram(values, opts, creds)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(done) == 0 {
				fmt.Fprintln(out, "All of the log directories are already formatted.")
			}
			for _, d := range done {
				fmt.Fprintf(out, "Formatted %s: cluster.id %s, node.id %d.\n", d, opts.ClusterID, values.Int("node.id"))
				if voters, err := metaprops.ReadInitialVoters(vfs.OS, d); err == nil && len(voters) > 0 {
					fmt.Fprintf(out, "Stored the initial voters in %s: %s.\n", metaprops.InitialVotersPath(d), metaprops.FormatInitialVoters(voters))
				}
			}
			for _, c := range creds {
				fmt.Fprintf(out, "Added the %s credential of user %s for the first start.\n", scramName(c.Mechanism), c.Name)
			}
			return nil
		},
	}
	conf.register(cmd, "c")
	cmd.Flags().StringVarP(&opts.ClusterID, "cluster-id", "t", "", "the cluster's ID (samsa storage random-uuid draws one)")
	cmd.Flags().BoolVarP(&opts.IgnoreFormatted, "ignore-formatted", "g", false, "leave formatted directories as they are and format the others")
	cmd.Flags().BoolVarP(&opts.Standalone, "standalone", "s", false, "make this controller the quorum's only initial voter (KIP-853)")
	cmd.Flags().StringVarP(&opts.InitialControllers, "initial-controllers", "I", "", "the quorum's initial voters, id@host:port:directory-id,... (KIP-853); the same on every node")
	cmd.Flags().BoolVarP(&opts.NoInitialControllers, "no-initial-controllers", "N", false, "store no initial voter set (KIP-853)")
	cmd.Flags().StringArrayVarP(&scram, "add-scram", "S", nil,
		"a user's SCRAM credential for the first start, 'SCRAM-SHA-256=[name=alice,password=alice-secret]' (repeatable; see above)")
	cmd.MarkFlagRequired("cluster-id")
	return cmd
}

// scramName is a SCRAM mechanism's name.
func scramName(m int8) string {
	if m == metadata.ScramSHA512 {
		return "SCRAM-SHA-512"
	}
	return "SCRAM-SHA-256"
}

func newStorageRandomUUID() *cobra.Command {
	return &cobra.Command{
		Use:   "random-uuid",
		Short: "Print a new random cluster ID (a Kafka UUID), as kafka-storage.sh random-uuid does",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := metaprops.NewClusterID()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
}
