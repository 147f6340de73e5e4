// Package tasktypes reads the task-type files of `revisit task-type
// register` (a YAML list of task types) and registers their task types in
// a store: the command and `revisit serve --demo` load task types through
// it.
package tasktypes

import (
	"context"
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

// Fields are the settable fields of a task type, as the keys of a
// task-type file (and the flags of `revisit task-type add`).
type Fields struct {
	Type            string          `yaml:"type"`
	Description     string          `yaml:"description"`
	BackendName     string          `yaml:"backend_name"`
	DefaultInterval config.Duration `yaml:"default_interval"`
	MinInterval     config.Duration `yaml:"min_interval"`
	MaxInterval     config.Duration `yaml:"max_interval"`
	BackoffFactor   float64         `yaml:"backoff_factor"`
	MaxQueueLength  int             `yaml:"max_queue_length"`
	NumRetries      int             `yaml:"num_retries"`
	RetryDelay      config.Duration `yaml:"retry_delay"`
	RunTimeout      config.Duration `yaml:"run_timeout"`
}

// NewFields returns the fields of a task type that sets none: every field
// zero but the queue bound, revisit.DefaultMaxQueueLength.
func NewFields() Fields { return Fields{MaxQueueLength: revisit.DefaultMaxQueueLength} }

// TaskType returns the task type f describes.
func (f Fields) TaskType() revisit.TaskType {
	return revisit.TaskType{
		Type: f.Type, Description: f.Description, BackendName: f.BackendName,
		DefaultInterval: time.Duration(f.DefaultInterval), MinInterval: time.Duration(f.MinInterval),
		MaxInterval: time.Duration(f.MaxInterval), BackoffFactor: f.BackoffFactor,
		MaxQueueLength: f.MaxQueueLength, NumRetries: f.NumRetries, RetryDelay: time.Duration(f.RetryDelay),
		RunTimeout: time.Duration(f.RunTimeout),
	}
}

// Read reads and checks the task-type file name.
func Read(name string) ([]revisit.TaskType, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("task types: %w", err)
	}
	return Parse(name, data)
}

// Parse reads and checks the task types of data, a task-type file; name
// names it in errors, which also say the entry and line at fault.
func Parse(name string, data []byte) ([]revisit.TaskType, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", name, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: no task types", name)
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: want a list of task types (- type: load-git ...), line %d", name, list.Line)
	}
	var ts []revisit.TaskType
	seen := map[string]int{}
	for i, n := range list.Content {
		entry := fmt.Sprintf("%s: entry %d (line %d)", name, i+1, n.Line)
		f := NewFields()
		if err := config.DecodeNode(n, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", entry, err)
		}
		if f.Type != "" {
			entry = fmt.Sprintf("%s: entry %d (%s, line %d)", name, i+1, f.Type, n.Line)
		}
		t := f.TaskType()
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", entry, err)
		}
		if j, dup := seen[t.Type]; dup {
			return nil, fmt.Errorf("%s: task type %s is also entry %d", entry, t.Type, j)
		}
		seen[t.Type] = i + 1
		ts = append(ts, t)
	}
	return ts, nil
}

// Store is what Register needs of a store; store.Store satisfies it.
type Store interface {
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	TaskTypeCreate(ctx context.Context, t revisit.TaskType) error
	TaskTypeUpdate(ctx context.Context, t revisit.TaskType) error
}

// Register creates the task types of ts that do not exist in st and
// updates the others.
func Register(ctx context.Context, st Store, ts []revisit.TaskType) (created, updated int, err error) {
	for _, t := range ts {
		_, err := st.TaskTypeGet(ctx, t.Type)
		switch {
		case err == nil:
			if err := st.TaskTypeUpdate(ctx, t); err != nil {
				return created, updated, fmt.Errorf("update task type %s: %w", t.Type, err)
			}
			updated++
		case revisit.Code(err) == revisit.CodeNotFound:
			if err := st.TaskTypeCreate(ctx, t); err != nil {
				return created, updated, fmt.Errorf("create task type %s: %w", t.Type, err)
			}
			created++
		default:
			return created, updated, fmt.Errorf("task type %s: %w", t.Type, err)
		}
	}
	return created, updated, nil
}
