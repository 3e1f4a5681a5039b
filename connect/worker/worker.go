package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/cli"
	"github.com/samsa-io/samsa/internal/connectrt/builtin"
)

// Command is `samsa connect` as a cobra command that also runs plugins. A
// plugin whose class name or alias is already taken (by a built-in or by
// another plugin given) is refused when the worker starts.
func Command(plugins ...connect.Plugin) *cobra.Command {
	cmd := cli.NewConnectCommand(plugins...)
	// The runtime finds a connector by its first matching name, so a
	// plugin named as a built-in would silently never run: refuse it.
	cmd.PreRunE = func(*cobra.Command, []string) error { return CheckPlugins(plugins) }
	// Errors are printed once, by cobra; a failure to start is no reason to
	// print the usage as well.
	cmd.SilenceUsage = true
	return cmd
}

// Main runs Command with the program's arguments and exits: 0 after an
// interrupt (SIGINT or SIGTERM) stopped the worker, 1 when it could not
// start or failed.
func Main(plugins ...connect.Plugin) {
	os.Exit(run(os.Args, plugins))
}

func run(args []string, plugins []connect.Plugin) int {
	cmd := Command(plugins...)
	// Help shows the program's own name, not samsa's subcommand.
	if len(args) > 0 {
		_, usage, _ := strings.Cut(cmd.Use, " ")
		cmd.Use = filepath.Base(args[0]) + " " + usage
		args = args[1:]
	}
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return 1
	}
	return 0
}

// CheckPlugins refuses plugins the worker could not run as given: without a
// class name or a constructor, of a type other than source or sink, or named
// (class or alias) as a built-in connector or another plugin.
func CheckPlugins(plugins []connect.Plugin) error {
	taken := map[string]string{}
	for _, p := range builtin.Connectors() {
		for _, n := range p.Names() {
			taken[n] = "the built-in " + p.Class
		}
	}
	for _, p := range plugins {
		switch {
		case p.Class == "":
			return fmt.Errorf("connect plugin with aliases %v has no class name", p.Aliases)
		case p.New == nil:
			return fmt.Errorf("connect plugin %s has no New function", p.Class)
		case p.Type != connect.PluginSource && p.Type != connect.PluginSink:
			return fmt.Errorf("connect plugin %s: type %q is neither %q nor %q", p.Class, p.Type, connect.PluginSource, connect.PluginSink)
		}
		for _, n := range p.Names() {
			if owner, dup := taken[n]; dup {
				return fmt.Errorf("connect plugin %s: the name %s is already taken by %s", p.Class, n, owner)
			}
			taken[n] = p.Class
		}
	}
	return nil
}
