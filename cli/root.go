// Package cli holds the revisit command line: one cobra command per verb,
// each thin (parse the arguments, call the store, print the result with the
// shared writers of output.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/kit/access"
	"github.com/revisit-sched/revisit/store"
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed
	ExitUsage = 2 // the command line is wrong
)

// Env is what a run of the command line reads and writes: its streams, its
// environment and how it opens stores. OSEnv returns the process's.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Environ is the environment, as os.Environ returns it.
	Environ []string
	// OpenStore opens a store; nil means store.Open.
	OpenStore func(ctx context.Context, url string, opts store.Options) (store.Store, error)
	// Clock is the clock of every role and command; nil means time.Now.
	Clock revisit.Clock
	// Executable is the revisit program that a command runs again in
	// child processes to share out its work (simulate's parts); empty,
	// the command does all of it in this process.
	Executable string
}

// OSEnv returns the environment of the process.
func OSEnv() Env {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), Executable: exe}
}

// Run runs the command line args (without the program name) and returns the
// exit code. A failure prints one line "revisit: <error>" on env.Stderr.
func Run(ctx context.Context, env Env, args []string) (code int) {
	a := &app{env: env, args: args}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(env.Stderr, "revisit: internal error (please report it): %v\n", r)
			code = ExitError
		}
	}()
	defer a.close()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetContext(ctx) // see ExecuteC
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	var ue usageError
	if !a.started || errors.As(err, &ue) {
		path := root.Name()
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(env.Stderr, "revisit: %s (see '%s --help')\n", oneLine(err.Error()), path)
		return ExitUsage
	}
	var what interrupted
	if errors.As(err, &what) {
		fmt.Fprintf(env.Stderr, "revisit: interrupted: %s\n", what.done)
		return ExitError
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(env.Stderr, "revisit: interrupted")
		return ExitError
	}
	msg := oneLine(err.Error())
	if a.server != "" && revisit.Code(err) == access.CodeUnauthorized {
		msg += " (give the server's token with --token)"
	}
	fmt.Fprintf(env.Stderr, "revisit: %s\n", msg)
	return ExitError
}

// interrupted is a command stopped by SIGINT or SIGTERM, saying what it
// had done and how to go on.
type interrupted struct{ done string }

func (e interrupted) Error() string { return "interrupted: " + e.done }
func (e interrupted) Unwrap() error { return context.Canceled }

// usageError is a mistake in the command line, reported with exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// named words an invalid-input error about an argument or a flag in the
// user's terms: "COUNT: …" or "--now: …" rather than the field's name.
func named(name string, err error) error {
	var e *revisit.Error
	if errors.As(err, &e) && e.Code == revisit.CodeInvalid {
		return fmt.Errorf("%s: %s", name, e.Message)
	}
	return err
}

// flagged words an invalid-input error in the command line's terms: the
// field it names becomes the argument or flag that names gives for it,
// and the error a usage error. Other errors are returned as they are.
func flagged(err error, names map[string]string) error {
	var e *revisit.Error
	if errors.As(err, &e) && e.Code == revisit.CodeInvalid {
		if name, ok := names[e.Field]; ok {
			return usagef("%s: %s", name, e.Message)
		}
	}
	return err
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// app is the state the commands of one run share.
type app struct {
	env Env
	// args is the command line, without the program name.
	args []string
	// started is set once the command line has parsed and a command runs;
	// errors before that are usage errors.
	started bool

	// Global flags.
	configFile string
	storeURL   string
	brokerURL  string
	formatName string
	logLevel   string
	server     string
	token      string

	cfg *config.Config
	log *slog.Logger
	// storeNoticed: the embedded default store was announced already.
	storeNoticed bool
	store        store.Store
	format       format
	// closers release what commands opened besides the store (brokers).
	closers []func() error
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "revisit",
		Short: "Schedule recurring visits of software origins",
		Long: `revisit schedules recurring visits of software origins (git repositories,
package pages, ...) by loaders, like the Software Heritage scheduler.

The store is an SQLite file (the default, sqlite://revisit.db in the current
directory) or a PostgreSQL database (--store postgres://...). Configuration
comes from defaults, a YAML file (--config), REVISIT_* environment variables
and flags, each overriding the one before.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.started = true
			f, err := parseFormat(a.formatName)
			if err != nil {
				return usageError{err}
			}
			a.format = f
			return nil
		},
	}
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	pf.StringVar(&a.configFile, "config", "", "YAML configuration `file` (default: $REVISIT_CONFIG, else none)")
	pf.StringVar(&a.storeURL, "store", "", "store `URL`: postgres://..., sqlite:///abs/path.db or sqlite://rel/path.db (default: config, $REVISIT_STORE, else "+config.DefaultStore+")")
	pf.StringVar(&a.brokerURL, "broker", "", "broker: embedded, or a RabbitMQ `URL` amqp://user:pass@host:port/vhost (default: config, $REVISIT_BROKER, else embedded)")
	pf.StringVar(&a.formatName, "format", "table", "output `format`: table, json or csv")
	pf.StringVar(&a.server, "server", "", "drive the revisit server at this `URL` (http://host:5080) instead of the store, where the command allows it")
	pf.StringVar(&a.token, "token", "", "bearer `token` for --server")
	pf.StringVar(&a.logLevel, "log-level", "", "log `level`: debug, info, warn or error (default: config, $REVISIT_LOG_LEVEL, else info)")

	root.AddCommand(
		a.dbCommand(),
		a.taskTypeCommand(),
		a.taskCommand(),
		a.listerCommand(),
		a.originCommand(),
		a.addForgeNowCommand(),
		a.visitStatsCommand(),
		a.visitStatusCommand(),
		a.visitTypeCommand(),
		a.brokerCommand(),
		a.queueCommand(),
		a.workerCommand(),
		a.historyCommand(),
		a.scheduleRecurrentCommand(),
		a.listenerCommand(),
		a.journalClientCommand(),
		a.serveCommand(),
		a.runnerCommand(),
		a.firstVisitsCommand(),
		a.benchCommand(),
		a.simulateCommand(),
		a.importCommand(),
	)
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups others
// print its help when called alone, and fail with a usage error naming
// the closest subcommands when called with an unknown one (cobra would
// print the help and succeed).
func refuseUnknownSubcommands(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args = cobra.ArbitraryArgs
		cmd.SuggestionsMinimumDistance = 2
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		}
	}
	for _, sub := range cmd.Commands() {
		refuseUnknownSubcommands(sub)
	}
}

// unknownCommand is the usage error of an unknown subcommand of cmd.
func unknownCommand(cmd *cobra.Command, name string) error {
	suggestions := cmd.SuggestionsFor(name)
	if len(suggestions) == 0 {
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return usagef("unknown command %q for %q (commands: %s)", name, cmd.CommandPath(), strings.Join(names, ", "))
	}
	return usagef("unknown command %q for %q (did you mean %s?)", name, cmd.CommandPath(),
		quotedAlternatives(suggestions))
}

// quotedAlternatives joins names as "a", "a" or "b", "a", "b" or "c".
func quotedAlternatives(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	if len(quoted) == 1 {
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// flagError makes flag parsing errors usage errors, and explains the
// commonest surprise: a negative number taken for a flag.
func flagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown shorthand flag") {
		if i := strings.LastIndex(msg, " in -"); i >= 0 {
			arg := msg[i+len(" in "):]
			if len(arg) > 1 && arg[1] >= '0' && arg[1] <= '9' {
				return usagef("%s: negative numbers are not valid arguments here", arg)
			}
		}
	}
	return usageError{err}
}

// config loads the configuration once: defaults, file, environment, and the
// global flags that were set.
func (a *app) config(cmd *cobra.Command) (config.Config, error) {
	if a.cfg != nil {
		return *a.cfg, nil
	}
	flags := map[string]string{}
	for name, key := range map[string]string{"store": "store", "broker": "broker", "log-level": "log.level"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			flags[key] = f.Value.String()
		}
	}
	cfg, err := config.Load(config.Sources{File: a.configFile, Environ: a.env.Environ, Flags: flags})
	if err != nil {
		return config.Config{}, err
	}
	a.cfg = &cfg
	a.log = config.NewLogger(a.env.Stderr, cfg.Log)
	return cfg, nil
}

// storeURL returns the configured store URL, and tells once on standard
// error when it is the embedded default.
func (a *app) resolveStoreURL(cmd *cobra.Command) (string, error) {
	if a.server != "" {
		return "", usagef("--server: %s works on the store only, not through a server", cmd.CommandPath())
	}
	cfg, err := a.config(cmd)
	if err != nil {
		return "", err
	}
	if cfg.IsDefault("store") && !a.storeNoticed {
		a.storeNoticed = true
		p, err := filepath.Abs(config.DefaultStoreFile)
		if err != nil {
			return "", fmt.Errorf("store %s: %w", store.Redact(cfg.Store), err)
		}
		fmt.Fprintf(a.env.Stderr, "revisit: using the embedded SQLite store at %s (set --store or REVISIT_STORE to change)\n", p)
	}
	a.log.Debug("store", "url", store.Redact(cfg.Store), "source", cfg.Source("store"))
	return cfg.Store, nil
}

// openStore opens the configured store; Run closes it.
func (a *app) openStore(cmd *cobra.Command) (store.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	url, err := a.resolveStoreURL(cmd)
	if err != nil {
		return nil, err
	}
	open := a.env.OpenStore
	if open == nil {
		open = store.Open
	}
	st, err := open(cmd.Context(), url, store.Options{Clock: a.env.Clock, MustExist: readsOnly(cmd)})
	if err != nil {
		return nil, openStoreError(url, err)
	}
	a.store = st
	return st, nil
}

// readOnlyCommands change nothing in the store: on a store that does not
// exist they say so rather than create it.
var readOnlyCommands = []string{"broker depth", "broker events", "db status", "lister list", "lister show",
	"origin check-ingested", "origin list", "origin metrics", "origin peek-next", "origin search", "origin show", "task list", "task list-pending", "task-type list",
	"task-type show", "visit-stats show"}

// readsOnly reports whether cmd is one of readOnlyCommands.
func readsOnly(cmd *cobra.Command) bool {
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	return slices.Contains(readOnlyCommands, path)
}

// openStoreError explains why the store at url did not open; a missing
// embedded store is no failure of the user's but a store not created yet.
func openStoreError(url string, err error) error {
	if revisit.Code(err) == revisit.CodeNotFound {
		return fmt.Errorf("%w: nothing was recorded there yet (a command that writes, such as "+
			"`revisit origin record` or `revisit serve`, creates it)", err)
	}
	return fmt.Errorf("open store %s: %w", store.Redact(url), err)
}

// adviseOnServer logs, as warnings, what the configured store says of its
// database server's settings (store.SettingsAdvice). The long-running
// commands and the benches call it as they start; a store that cannot be
// reached is left for the command to report.
func (a *app) adviseOnServer(cmd *cobra.Command) {
	url, err := a.resolveStoreURL(cmd)
	if err != nil {
		return
	}
	advice, err := store.SettingsAdvice(cmd.Context(), url)
	if err != nil {
		a.log.Warn("could not read the database server's settings", "err", err)
	}
	for _, sentence := range advice {
		a.log.Warn("database server setting: " + sentence)
	}
}

func (a *app) close() {
	for _, c := range a.closers {
		if err := c(); err != nil && a.log != nil {
			a.log.Warn("closing", "err", err)
		}
	}
	a.closers = nil
	if a.store != nil {
		if err := a.store.Close(); err != nil && a.log != nil {
			a.log.Warn("closing the store", "err", err)
		}
		a.store = nil
	}
}

func (a *app) now() time.Time { return a.env.Clock.Now() }

// stderrIsTerminal reports whether standard error is a terminal, where
// progress bars are shown.
func (a *app) stderrIsTerminal() bool {
	f, ok := a.env.Stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// exactArgs is cobra.ExactArgs naming the arguments expected.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("want %d argument(s) %s, got %d", len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}

// rangeArgs accepts between min and max arguments.
func rangeArgs(min, max int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usagef("want arguments %s, got %d argument(s)", names, len(args))
		}
		return nil
	}
}

// changed reports whether a flag was set on the command line.
func changed(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
