package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/store"
)

var taskTypeColumns = []column{
	{name: "type"}, {name: "backend_name"}, {name: "description", wide: true},
	{name: "default_interval"}, {name: "min_interval"}, {name: "max_interval"},
	{name: "backoff_factor"}, {name: "max_queue_length"}, {name: "num_retries"}, {name: "retry_delay"},
	{name: "run_timeout"},
}

func taskTypeRow(t revisit.TaskType) []any {
	var backoff any
	if t.BackoffFactor != 0 {
		backoff = t.BackoffFactor
	}
	return []any{t.Type, t.BackendName, t.Description,
		t.DefaultInterval, t.MinInterval, t.MaxInterval,
		backoff, t.MaxQueueLength, t.NumRetries, t.RetryDelay, t.RunTimeout}
}

func (a *app) taskTypeCommand() *cobra.Command {
	tt := &cobra.Command{
		Use:   "task-type",
		Short: "Manage task types (load-git, ...)",
	}
	tt.AddCommand(a.taskTypeAddCommand(), a.taskTypeRegisterCommand(),
		&cobra.Command{
			Use:   "list",
			Short: "List the task types",
			Args:  exactArgs(),
			RunE: func(cmd *cobra.Command, _ []string) error {
				st, err := a.backend(cmd)
				if err != nil {
					return err
				}
				ts, err := st.TaskTypeList(cmd.Context())
				if err != nil {
					return fmt.Errorf("list task types: %w", err)
				}
				rw := a.rows(taskTypeColumns)
				for _, t := range ts {
					if err := rw.Row(taskTypeRow(t)...); err != nil {
						return err
					}
				}
				return rw.Close()
			},
		},
		&cobra.Command{
			Use:   "show TYPE",
			Short: "Show one task type",
			Args:  exactArgs("TYPE"),
			RunE: func(cmd *cobra.Command, args []string) error {
				st, err := a.backend(cmd)
				if err != nil {
					return err
				}
				t, err := st.TaskTypeGet(cmd.Context(), args[0])
				if err != nil {
					return fmt.Errorf("task type %s: %w", args[0], err)
				}
				return a.printObject(taskTypeColumns, taskTypeRow(t)...)
			},
		})
	return tt
}

// taskTypeFields are the settable fields of a task type, as flags and as
// the keys of task-type register files.
type taskTypeFields struct {
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

func (f taskTypeFields) taskType() revisit.TaskType {
	return revisit.TaskType{
		Type: f.Type, Description: f.Description, BackendName: f.BackendName,
		DefaultInterval: time.Duration(f.DefaultInterval), MinInterval: time.Duration(f.MinInterval),
		MaxInterval: time.Duration(f.MaxInterval), BackoffFactor: f.BackoffFactor,
		MaxQueueLength: f.MaxQueueLength, NumRetries: f.NumRetries, RetryDelay: time.Duration(f.RetryDelay),
		RunTimeout: time.Duration(f.RunTimeout),
	}
}

func (a *app) taskTypeAddCommand() *cobra.Command {
	f := taskTypeFields{MaxQueueLength: revisit.DefaultMaxQueueLength}
	cmd := &cobra.Command{
		Use:   "add TYPE --backend-name NAME",
		Short: "Create a task type",
		Long: `Create a task type. Durations are written 12h, 90m, 64d, "90 days",
"1 day", "12 hours", "30 minutes" or "1 day, 12:00:00"; 0 means not set.`,
		Example: "  revisit task-type add load-git --backend-name swh.loader.git.tasks.UpdateGitRepository \\\n" +
			"      --default-interval 64d --min-interval 12h --max-interval 64d --backoff-factor 2",
		Args: exactArgs("TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Type = args[0]
			if f.BackendName == "" {
				return usagef("--backend-name is required")
			}
			t := f.taskType()
			if err := t.Validate(); err != nil {
				return fmt.Errorf("task type %s: %w", t.Type, err)
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			if err := st.TaskTypeCreate(cmd.Context(), t); err != nil {
				if revisit.Code(err) == revisit.CodeConflict {
					return fmt.Errorf("task type %s exists already (task-type register updates task types)", t.Type)
				}
				return fmt.Errorf("create task type %s: %w", t.Type, err)
			}
			return a.printSummary("created task type "+t.Type, taskTypeColumns, taskTypeRow(t)...)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.BackendName, "backend-name", "", "worker-side task `name` (required), e.g. swh.loader.git.tasks.UpdateGitRepository")
	fl.StringVar(&f.Description, "description", "", "free `text`")
	fl.Var(&f.DefaultInterval, "default-interval", "interval of new recurring tasks")
	fl.Var(&f.MinInterval, "min-interval", "shortest interval of recurring tasks")
	fl.Var(&f.MaxInterval, "max-interval", "longest interval of recurring tasks")
	fl.Float64Var(&f.BackoffFactor, "backoff-factor", 0, "interval multiplier after an uneventful run (divider after an eventful one)")
	fl.IntVar(&f.MaxQueueLength, "max-queue-length", revisit.DefaultMaxQueueLength, "most messages waiting in the queue")
	fl.IntVar(&f.NumRetries, "num-retries", 0, "retries of a failed task")
	fl.Var(&f.RetryDelay, "retry-delay", "delay before a retry")
	fl.Var(&f.RunTimeout, "run-timeout", "silence after which a run is declared lost (default 1 day)")
	return cmd
}

func (a *app) taskTypeRegisterCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "register FILE.yaml",
		Short: "Create or update the task types a YAML file lists",
		Long: `Create or update the task types a YAML file lists. The file is a list of
task types with the keys type, backend_name, description, default_interval,
min_interval, max_interval, backoff_factor, max_queue_length (default 1000),
num_retries, retry_delay and run_timeout (default 1 day):

  - type: load-git
    backend_name: swh.loader.git.tasks.UpdateGitRepository
    default_interval: 64 days
    min_interval: 12 hours
    max_interval: 64 days
    backoff_factor: 2
    max_queue_length: 5000

An existing task type is replaced by the file's entry. Every entry is
checked before anything is written.`,
		Args: exactArgs("FILE.yaml"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ts, err := readTaskTypes(args[0])
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			created, updated, err := registerTaskTypes(cmd.Context(), st, ts)
			if err != nil {
				return err
			}
			return a.printSummary(fmt.Sprintf("created %d, updated %d task types", created, updated),
				cols("created", "updated"), created, updated)
		},
	}
}

// readTaskTypes reads and checks a task-type register file.
func readTaskTypes(name string) ([]revisit.TaskType, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("task types: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %s", name, oneLine(err.Error()))
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
		f := taskTypeFields{MaxQueueLength: revisit.DefaultMaxQueueLength}
		if err := config.DecodeNode(n, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", entry, err)
		}
		if f.Type != "" {
			entry = fmt.Sprintf("%s: entry %d (%s, line %d)", name, i+1, f.Type, n.Line)
		}
		t := f.taskType()
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

// registerTaskTypes creates the task types that do not exist and updates
// the others.
func registerTaskTypes(ctx context.Context, st store.Store, ts []revisit.TaskType) (created, updated int, err error) {
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
