// Command samsa is the single binary: broker, tools and services. This file
// only wires cobra commands to the packages that do the work.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/cli"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "samsa",
		Short:         "Samsa: a Kafka-compatible streaming platform",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newVersion(), newServe())
	root.AddCommand(cli.Commands()...)
	return root
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the build version",
		Run: func(cmd *cobra.Command, _ []string) {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			fmt.Fprintln(cmd.OutOrStdout(), "samsa", v)
		},
	}
}
