package config

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Reference writes the configuration reference in Markdown: every key of
// the YAML file, in the file's order, with its environment variable (the
// settings that have one) and its default. docs/configuration.md is this
// text (TestConfigurationReference keeps it current).
func Reference(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n" +
		"Generated from the configuration's own definition: " +
		"`TEST_UPDATE=1 go test ./config -run TestConfigurationReference` writes it again.\n\n" +
		"Each setting comes from its default, then the YAML file (`--config FILE`, or the file `" + EnvPrefix +
		"CONFIG` names), then its environment variable, then the command line's flag where there is one " +
		"(`--store`, `--broker`, `--log-level`), each overriding the one before; an unknown key or " +
		"variable is an error naming it. Lists and maps are set in the file only. docs/deploy/revisit.yaml " +
		"is a commented production example; docs/semantics.md §4 says what the orchestrator's settings do.\n\n" +
		"| key | environment variable | default |\n|---|---|---|\n")
	def := reflect.ValueOf(Default())
	var walk func(t reflect.Type, v reflect.Value, path string) error
	walk = func(t reflect.Type, v reflect.Value, path string) error {
		for i := range t.NumField() {
			f := t.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			key, fv := join(path, name), v.Field(i)
			if !isLeaf(f.Type) && f.Type.Kind() == reflect.Struct {
				if err := walk(f.Type, fv, key); err != nil {
					return err
				}
				continue
			}
			env := "—"
			if isLeaf(f.Type) {
				env = "`" + EnvVar(key) + "`"
			}
			value, err := defaultText(fv)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", key, env, value)
		}
		return nil
	}
	if err := walk(def.Type(), def, ""); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// defaultText writes a default value as the file would hold it; "none"
// for an empty one (no text, duration, list or map), but a flag's false.
func defaultText(v reflect.Value) (string, error) {
	if v.IsZero() && v.Kind() != reflect.Bool {
		return "none", nil
	}
	out, err := yaml.Marshal(v.Interface())
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(string(out))
	if strings.Contains(text, "\n") {
		// A list or a map: its flow form, on one line.
		var node yaml.Node
		if err := node.Encode(v.Interface()); err != nil {
			return "", err
		}
		setFlow(&node)
		out, err := yaml.Marshal(&node)
		if err != nil {
			return "", err
		}
		text = strings.TrimSpace(string(out))
	}
	return "`" + strings.ReplaceAll(text, "|", `\|`) + "`", nil
}

// setFlow writes a YAML node and its children in flow style.
func setFlow(n *yaml.Node) {
	n.Style |= yaml.FlowStyle
	for _, c := range n.Content {
		setFlow(c)
	}
}
