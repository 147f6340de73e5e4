// Package config loads the configuration of revisit.
//
// Four layers, each overriding the one before: the defaults (Default), a
// YAML file (the --config flag, else the file the REVISIT_CONFIG variable
// names, else none), the environment, then command-line flags.
//
// The file is read strictly: a key revisit does not know, or a value of the
// wrong type, is an error naming the key, for example
//
//	config file revisit.yaml: unknown key "stroe" (line 1)
//
// Keys are dotted paths of sections and settings:
//
//	store: postgres://revisit@db/revisit   # default sqlite://revisit.db
//	broker: amqp://guest:guest@rabbitmq:5672/   # default embedded
//	log:
//	  level: info                           # debug, info, warn or error
//	  format: text                          # text or json
//
// Every setting (not the sections, lists and per-visit-type maps that later
// sections hold) is also read from an environment variable named REVISIT_
// followed by its key, upper-cased, with dots written as underscores:
//
//	REVISIT_STORE       store
//	REVISIT_BROKER      broker
//	REVISIT_LOG_LEVEL   log.level
//	REVISIT_LOG_FORMAT  log.format
//	REVISIT_API_LISTEN  api.listen
//
// REVISIT_CONFIG names the configuration file. Any other REVISIT_ variable is
// an error, so that a misspelt one is not silently ignored. Keys lists every
// setting, EnvVar gives its variable.
//
// A new section is a new struct field with a `yaml` tag (and a default in
// Default, and checks in Validate); its settings get their variables, strict
// file decoding and source tracking without further code.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/revisit-sched/revisit/store"
)

// BrokerEmbedded is the broker setting of the embedded broker, the
// default.
const BrokerEmbedded = "embedded"

// DefaultStore is the store used when none is configured: the SQLite file
// DefaultStoreFile in the current directory.
const DefaultStore = "sqlite://" + DefaultStoreFile

// DefaultStoreFile is the file of DefaultStore, relative to the current
// directory.
const DefaultStoreFile = "revisit.db"

// EnvPrefix starts the name of every environment variable revisit reads.
const EnvPrefix = "REVISIT_"

// EnvConfigFile is the environment variable naming the configuration file.
const EnvConfigFile = EnvPrefix + "CONFIG"

// Config is the whole configuration of revisit.
type Config struct {
	// Store is the URL of the store, which a registered store driver takes
	// (store.ValidateURL): postgres://…, postgresql://… or sqlite://path.
	Store string `yaml:"store"`
	// Broker is the message broker the workers read from: "embedded"
	// (the default: queues in the store, workers lease over HTTP from
	// revisit serve) or amqp://user:pass@host:port/vhost (RabbitMQ, for
	// Python Celery workers; amqps:// with TLS).
	Broker string `yaml:"broker"`
	// Log configures the diagnostic log.
	Log Log `yaml:"log"`
	// Orchestrator configures schedule-recurrent.
	Orchestrator Orchestrator `yaml:"orchestrator"`
	// API configures the HTTP server of revisit serve.
	API API `yaml:"api"`
	// Retention configures the periodic retention of generic tasks.
	Retention Retention `yaml:"retention"`
	// Embedded configures the embedded broker.
	Embedded Embedded `yaml:"embedded"`
	// Results configures how worker results and visit statuses are taken
	// in.
	Results Results `yaml:"results"`
	// FirstVisits configures the first visits of listers with their own
	// queues for them.
	FirstVisits FirstVisits `yaml:"first_visits"`
	// Journal configures the journal client: visit results from the
	// Software Heritage journal (Kafka).
	Journal Journal `yaml:"journal"`

	// sources records where each setting that is not a default came from.
	sources map[string]string
}

// Log configures the diagnostic log (written to standard error).
type Log struct {
	// Level is the least severe level logged: debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text (for people) or json (for log collectors).
	Format string `yaml:"format"`
}

// Log levels and formats.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"text", "json"}
)

// Default returns the configuration of a fresh installation.
func Default() Config {
	return Config{
		Store:        DefaultStore,
		Broker:       BrokerEmbedded,
		Log:          Log{Level: "info", Format: "text"},
		Orchestrator: defaultOrchestrator(),
		API:          defaultAPI(),
		Retention:    defaultRetention(),
		Embedded:     defaultEmbedded(),
		Results:      defaultResults(),
		FirstVisits:  defaultFirstVisits(),
		Journal:      defaultJournal(),
	}
}

// Sources says what Load reads besides the defaults.
type Sources struct {
	// File is the YAML file to read; when empty, the file REVISIT_CONFIG
	// names, if any.
	File string
	// Environ is the environment, as os.Environ returns it; only REVISIT_
	// variables are read.
	Environ []string
	// Flags maps keys ("log.level") to values given on the command line.
	Flags map[string]string
}

// Load reads the layers src names over the defaults and validates the
// result.
func Load(src Sources) (Config, error) {
	cfg := Default()
	cfg.sources = map[string]string{}
	env := map[string]string{}
	for _, kv := range src.Environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, EnvPrefix) {
			env[k] = v
		}
	}

	file := src.File
	if file == "" {
		file = env[EnvConfigFile]
	}
	if file != "" {
		if err := cfg.loadFile(file); err != nil {
			return Config{}, err
		}
	}

	vars := envKeys()
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == EnvConfigFile {
			continue
		}
		key, ok := vars[name]
		if !ok {
			return Config{}, fmt.Errorf("unknown environment variable %s (known: %s, %s)",
				name, EnvConfigFile, strings.Join(EnvVars(), ", "))
		}
		if err := cfg.set(key, env[name], name); err != nil {
			return Config{}, fmt.Errorf("environment variable %s: %w", name, err)
		}
	}

	flagKeys := make([]string, 0, len(src.Flags))
	for k := range src.Flags {
		flagKeys = append(flagKeys, k)
	}
	slices.Sort(flagKeys)
	for _, key := range flagKeys {
		if err := cfg.set(key, src.Flags[key], "the command line"); err != nil {
			return Config{}, fmt.Errorf("command line: %s: %w", key, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func (c *Config) loadFile(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("config file %s: %w", name, err)
	}
	seen := map[string]bool{}
	if err := decodeYAMLSeen(data, c, seen); err != nil {
		return fmt.Errorf("config file %s: %w", name, err)
	}
	for key := range seen {
		c.sources[key] = "config file " + name
	}
	return nil
}

// set sets one setting from its text form and records its source.
func (c *Config) set(key, value, source string) error {
	f, ok := lookup(reflect.ValueOf(c).Elem(), key)
	if !ok || !isLeaf(f.Type()) {
		return fmt.Errorf("unknown key %q", key)
	}
	if err := setString(f, value); err != nil {
		return err
	}
	if c.sources == nil {
		c.sources = map[string]string{}
	}
	c.sources[key] = source
	return nil
}

// Source says where the value of a setting came from: "default", "config
// file NAME", an environment variable's name, or "the command line".
func (c Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return "default"
}

// IsDefault reports whether no layer set the setting.
func (c Config) IsDefault(key string) bool { return c.Source(key) == "default" }

// Keys lists the dotted keys of every setting.
func Keys() []string { return leafKeys(reflect.TypeFor[Config](), "") }

// EnvVar returns the environment variable of a setting.
func EnvVar(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// EnvVars lists the environment variables of every setting, sorted.
func EnvVars() []string {
	var vs []string
	for _, k := range Keys() {
		vs = append(vs, EnvVar(k))
	}
	slices.Sort(vs)
	return vs
}

func envKeys() map[string]string {
	m := map[string]string{}
	for _, k := range Keys() {
		m[EnvVar(k)] = k
	}
	return m
}

// Validate checks every setting; an error names the key, and where its
// value came from when not a default.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return c.sourced(key, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if err := store.ValidateURL(c.Store); err != nil {
		return c.sourced("store", err)
	}
	if err := checkBrokerURL(c.Broker); err != nil {
		return bad("broker", "%v", err)
	}
	if !slices.Contains(LogLevels, c.Log.Level) {
		return bad("log.level", "%q is not one of %s", c.Log.Level, strings.Join(LogLevels, ", "))
	}
	if !slices.Contains(LogFormats, c.Log.Format) {
		return bad("log.format", "%q is not one of %s", c.Log.Format, strings.Join(LogFormats, ", "))
	}
	if err := c.API.validate(); err != nil {
		if src := c.Source("api.listen"); src != "default" && strings.HasPrefix(err.Error(), "api.listen") {
			return fmt.Errorf("%w (set by %s)", err, src)
		}
		return err
	}
	for _, v := range []func() error{c.Orchestrator.validate, c.Retention.validate, c.Embedded.validate,
		c.Results.validate, c.FirstVisits.validate, c.Journal.validate} {
		if err := v(); err != nil {
			return err
		}
	}
	return nil
}

// sourced adds to the error of a setting where its value came from, when
// not a default.
func (c Config) sourced(key string, err error) error {
	if src := c.Source(key); src != "default" {
		return fmt.Errorf("%w (set by %s)", err, src)
	}
	return err
}

func checkBrokerURL(s string) error {
	if s == BrokerEmbedded {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Host == "" {
		return fmt.Errorf("%q is neither %s nor an amqp://user:pass@host:port/vhost (or amqps://) URL", store.Redact(s), BrokerEmbedded)
	}
	return nil
}

// SlogLevel returns the slog level of l.Level (info if unknown).
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// NewLogger returns a logger writing to w at the level and in the format l
// sets.
func NewLogger(w io.Writer, l Log) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.SlogLevel()}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Logger returns the logger cfg configures, writing to standard error.
func Logger(cfg Config) *slog.Logger { return NewLogger(os.Stderr, cfg.Log) }
