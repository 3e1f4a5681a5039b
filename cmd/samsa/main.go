// Command samsa is the single binary: broker, tools and services. This file
// only wires cobra commands to the packages that do the work.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/cli"
)

func main() {
	stopProfiles, err := startProfiles()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = newRoot().Execute()
	stopProfiles()
	if err != nil {
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "samsa",
		Short:         "Samsa: a Kafka-compatible streaming platform",
		SilenceUsage:  true,
		SilenceErrors: false,
		Version:       buildVersion(),
	}
	root.SetVersionTemplate("samsa {{.Version}}\n")
	root.Flags().BoolP("version", "v", false, "print the version, commit and Go version (as samsa version does)")
	root.AddCommand(newVersion(), newServe(), newStorage(), newDev())
	root.AddCommand(cli.Commands()...)
	cli.RejectUnknownSubcommands(root)
	return root
}
