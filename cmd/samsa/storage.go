package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/cli"
	"github.com/samsa-io/samsa/internal/metaprops"
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
		conf            configFlags
		clusterID       string
		ignoreFormatted bool
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
formatted for another cluster or node fails it either way.`,
		Example: `  samsa storage format --config server.properties --cluster-id "$(samsa storage random-uuid)"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ov, err := conf.given(cmd)
			if err != nil {
				return err
			}
			values, err := broker.LoadConfig(conf.propsPath, ov)
			if err != nil {
				return err
			}
			done, err := broker.FormatStorage(values, clusterID, ignoreFormatted, time.Now())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(done) == 0 {
				fmt.Fprintln(out, "All of the log directories are already formatted.")
			}
			for _, d := range done {
				fmt.Fprintf(out, "Formatted %s: cluster.id %s, node.id %d.\n", d, clusterID, values.Int("node.id"))
			}
			return nil
		},
	}
	conf.register(cmd, "c")
	cmd.Flags().StringVarP(&clusterID, "cluster-id", "t", "", "the cluster's ID (samsa storage random-uuid draws one)")
	cmd.Flags().BoolVarP(&ignoreFormatted, "ignore-formatted", "g", false, "leave formatted directories as they are and format the others")
	cmd.MarkFlagRequired("cluster-id")
	return cmd
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
