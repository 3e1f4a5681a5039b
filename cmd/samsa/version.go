package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/version"
)

// buildVersion is what samsa version and samsa --version print after
// "samsa " (internal/version.Describe).
func buildVersion() string { return version.Describe() }

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary (as --version does)",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "samsa", buildVersion())
		},
	}
}
