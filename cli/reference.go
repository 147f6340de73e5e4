package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Reference writes the command-line reference of revisit in Markdown: each
// command, in the order of its group, with its usage, what it does, its
// examples and its flags, as its --help says them. docs/cli.md is this
// text (TestCLIReference keeps it current).
func Reference(w io.Writer) error {
	root := (&app{}).rootCommand()
	root.InitDefaultHelpCmd()
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n" +
		"Generated from the commands' own help (`revisit COMMAND --help` says the same): " +
		"`TEST_UPDATE=1 go test ./cli -run TestCLIReference` writes it again.\n\n")
	b.WriteString("Global flags, taken by every command:\n\n```\n" + root.PersistentFlags().FlagUsages() + "```\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			reference(&b, sub)
			walk(sub)
		}
	}
	walk(root)
	_, err := io.WriteString(w, b.String())
	return err
}

// reference writes one command's section.
func reference(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n%s\n", c.CommandPath(), c.Short)
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(b, "\nCommands: %s.\n", strings.Join(subcommandNames(c), ", "))
	} else {
		fmt.Fprintf(b, "\n```\n%s\n```\n", c.UseLine())
	}
	if long := strings.TrimSpace(c.Long); long != "" && long != c.Short {
		fmt.Fprintf(b, "\n%s\n", long)
	}
	if c.Example != "" {
		fmt.Fprintf(b, "\nExamples:\n\n```\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
	}
	if flags := c.LocalNonPersistentFlags().FlagUsages(); flags != "" {
		fmt.Fprintf(b, "\nFlags:\n\n```\n%s```\n", flags)
	}
}

// subcommandNames are the names of a group's commands.
func subcommandNames(c *cobra.Command) []string {
	var out []string
	for _, sub := range c.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			out = append(out, "`"+sub.Name()+"`")
		}
	}
	return out
}
