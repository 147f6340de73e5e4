package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVariablesReadElsewhereLeaveLoadAlone reads every environment variable
// the repository's Go code, Python helpers and scripts read (the tests' own
// among them: TEST_POSTGRES_URL, TEST_PYTHON…), exports them all, and
// requires Load to succeed: a variable under EnvPrefix that Load does not
// know would make every command refuse to start in a shell that exports it.
func TestVariablesReadElsewhereLeaveLoadAlone(t *testing.T) {
	t.Parallel()
	names := variablesRead(t, "..")
	require.Subset(t, names, []string{"TEST_POSTGRES_URL", "TEST_AMQP_URL", "TEST_PYTHON", "TEST_FUZZTIME",
		"TEST_CELERY_BROKER", "TEST_OUT"}, "the scan finds the tests' variables in Go, Python and shell")

	known := map[string]bool{EnvConfigFile: true}
	for _, v := range EnvVars() {
		known[v] = true
	}
	var environ []string
	for _, name := range names {
		if known[name] {
			continue
		}
		require.False(t, strings.HasPrefix(name, EnvPrefix),
			"%s is read from the environment but is no setting of Load: a test variable starts with TEST_", name)
		environ = append(environ, name+"=1")
	}
	_, err := Load(Sources{Environ: environ})
	require.NoError(t, err, "Load with %v exported", environ)
}

var (
	// goReads and pyReads match a read of a variable in Go and in Python
	// (scripts of their own or held in a Go string).
	goReads = regexp.MustCompile(`os\.(?:Getenv|LookupEnv)\("([A-Z][A-Z0-9_]*)"\)`)
	pyReads = regexp.MustCompile(`os\.(?:environ\[|environ\.get\(|getenv\()['"]([A-Z][A-Z0-9_]*)['"]`)
	// shellUses matches a variable a shell script reads ($X, ${X…}) or sets
	// (X=…, export X=…).
	shellUses = regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]*)|(?m)^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=`)
)

// variablesRead returns, sorted and once each, the names of the environment
// variables the Go and Python files under root read and the shell scripts
// of its scripts and .ci directories use.
func variablesRead(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	add := func(re *regexp.Regexp, text []byte) {
		for _, m := range re.FindAllSubmatch(text, -1) {
			for _, g := range m[1:] {
				if len(g) > 0 {
					names = append(names, string(g))
				}
			}
		}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		shell := strings.HasPrefix(rel, "scripts"+string(filepath.Separator)) ||
			strings.HasPrefix(rel, ".ci"+string(filepath.Separator))
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".py" && !shell {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case ext == ".go":
			add(goReads, text)
			add(pyReads, text)
		case ext == ".py":
			add(pyReads, text)
		default:
			add(shellUses, text)
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(names)
	return slices.Compact(names)
}
