package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/tasktypes"
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

func (a *app) taskTypeAddCommand() *cobra.Command {
	f := tasktypes.NewFields()
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
			t := f.TaskType()
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
			ts, err := tasktypes.Read(args[0])
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			created, updated, err := tasktypes.Register(cmd.Context(), st, ts)
			if err != nil {
				return err
			}
			return a.printSummary(fmt.Sprintf("created %d, updated %d task types", created, updated),
				cols("created", "updated"), created, updated)
		},
	}
}
