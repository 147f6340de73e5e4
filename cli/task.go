package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/store"
)

var taskColumns = []column{
	{name: "id"}, {name: "type"}, {name: "policy"}, {name: "status"}, {name: "priority"},
	{name: "next_run"}, {name: "current_interval"}, {name: "retries_left"},
	{name: "args", wide: true}, {name: "kwargs"},
}

func taskRow(t revisit.Task) []any {
	var priority any
	if t.Priority != revisit.PriorityNone {
		priority = string(t.Priority)
	}
	return []any{t.ID, t.Type, string(t.Policy), string(t.Status), priority,
		t.NextRun, t.CurrentInterval, t.RetriesLeft, t.Arguments.Args, t.Arguments.Kwargs}
}

var taskRunColumns = []column{
	{name: "id"}, {name: "task"}, {name: "backend_id"}, {name: "status"},
	{name: "scheduled"}, {name: "confirmed", wide: true}, {name: "started"}, {name: "ended"}, {name: "metadata", wide: true},
}

func taskRunRow(r revisit.TaskRun) []any {
	return []any{r.ID, r.TaskID, r.BackendID, string(r.Status), r.Scheduled, r.Confirmed, r.Started, r.Ended, r.Metadata}
}

func (a *app) taskCommand() *cobra.Command {
	task := &cobra.Command{
		Use:   "task",
		Short: "Manage generic tasks (oneshot or recurring jobs of a task type)",
	}
	task.AddCommand(a.taskAddCommand(), a.taskScheduleCommand(), a.taskListCommand(),
		a.taskListPendingCommand(), a.taskRespawnCommand(), a.taskRunNowCommand(), a.taskDisableCommand(),
		a.taskArchiveCommand())
	return task
}

// parseTime parses an RFC 3339 time or a date (midnight UTC), for flag.
func parseTime(flag, s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), revisit.ValidateTime(flag, t)
		}
	}
	return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time (2024-03-01T12:00:00Z) or a date (2024-03-01)", flag, s)
}

// jsonOrString is the value of a k=v argument: v as JSON when it parses,
// else the string v.
func jsonOrString(v string) any {
	var x any
	if json.Unmarshal([]byte(v), &x) == nil {
		return x
	}
	return v
}

// parseKwargs reads KEY=VALUE arguments as keyword arguments, each VALUE
// read by value.
func parseKwargs(args []string, value func(string) any) (map[string]any, error) {
	kwargs := map[string]any{}
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("%q is not KEY=VALUE", kv)
		}
		kwargs[k] = value(v)
	}
	return kwargs, nil
}

func (a *app) taskAddCommand() *cobra.Command {
	var policy, priority, nextRun string
	var interval config.Duration
	cmd := &cobra.Command{
		Use:   "add TYPE [KEY=VALUE...]",
		Short: "Create a task",
		Long: `Create a task of task type TYPE. Each KEY=VALUE becomes a keyword argument
of the task; VALUE is read as JSON when it is valid JSON (42, true, null,
"quoted", [1,2], {"a":1}) and as a plain string otherwise (url=https://x).

A task identical to an active one (same type, arguments, policy and priority,
and for oneshot tasks the same next run) is not created again: the existing
task is printed.`,
		Example: "  revisit task add load-git url=https://github.com/torvalds/linux --policy oneshot --priority high",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("want arguments TYPE [KEY=VALUE...], got none")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kwargs, err := parseKwargs(args[1:], jsonOrString)
			if err != nil {
				return err
			}
			n := revisit.NewTask{Type: args[0], NextRun: a.now(), CurrentInterval: time.Duration(interval),
				Arguments: revisit.TaskArguments{Args: []any{}, Kwargs: kwargs}}
			if n.Policy, err = revisit.ParseTaskPolicy(policy); err != nil {
				return usagef("--policy: %s", err.(*revisit.Error).Message)
			}
			if n.Priority, err = revisit.ParseTaskPriority(priority); err != nil {
				return usagef("--priority: %s", err.(*revisit.Error).Message)
			}
			if nextRun != "" {
				if n.NextRun, err = parseTime("--next-run", nextRun); err != nil {
					return usageError{err}
				}
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ts, err := st.TasksCreate(cmd.Context(), []revisit.NewTask{n})
			if err != nil {
				return fmt.Errorf("create task: %w", err)
			}
			return a.printObject(taskColumns, taskRow(ts[0])...)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&policy, "policy", string(revisit.TaskRecurring), "oneshot or recurring")
	fl.StringVar(&priority, "priority", "", "high, normal or low (default: none)")
	fl.StringVar(&nextRun, "next-run", "", "first run `time`, RFC 3339 or a date (default: now)")
	fl.Var(&interval, "interval", "interval of a recurring task (default: the task type's default_interval)")
	return cmd
}

// taskFilterFlags are the selection flags of task list.
type taskFilterFlags struct {
	typ, status, priority, policy, before, after string
}

func (f taskFilterFlags) filter() (revisit.TaskFilter, error) {
	flt := revisit.TaskFilter{Type: f.typ}
	var err error
	if f.status != "" {
		if flt.Status, err = revisit.ParseTaskStatus(f.status); err != nil {
			return flt, usagef("--status: %s", err.(*revisit.Error).Message)
		}
	}
	if f.priority != "" {
		p, err := revisit.ParseTaskPriority(f.priority)
		if err != nil {
			return flt, usagef("--priority: %s", err.(*revisit.Error).Message)
		}
		flt.Priority = &p
	}
	if f.policy != "" {
		if flt.Policy, err = revisit.ParseTaskPolicy(f.policy); err != nil {
			return flt, usagef("--policy: %s", err.(*revisit.Error).Message)
		}
	}
	for _, b := range []struct {
		flag, v string
		dst     **time.Time
	}{{"--before", f.before, &flt.NextRunBefore}, {"--after", f.after, &flt.NextRunAfter}} {
		if b.v != "" {
			t, err := parseTime(b.flag, b.v)
			if err != nil {
				return flt, usageError{err}
			}
			*b.dst = &t
		}
	}
	return flt, nil
}

func (a *app) taskListCommand() *cobra.Command {
	var f taskFilterFlags
	var runs bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tasks, or with --runs their runs",
		Long: `List the tasks the flags select, in id order: --before and --after bound
their next run (after <= next_run < before). With --runs, list the runs of
those tasks instead, by task.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt, err := f.filter()
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			cols := taskColumns
			if runs {
				cols = taskRunColumns
			}
			rw := a.rows(cols)
			for {
				page, err := st.TasksGet(cmd.Context(), flt)
				if err != nil {
					return fmt.Errorf("list tasks: %w", err)
				}
				if err := a.printTasksPage(cmd, st, rw, page.Tasks, runs); err != nil {
					return err
				}
				if page.NextPageToken == "" {
					return rw.Close()
				}
				flt.PageToken = page.NextPageToken
			}
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.typ, "type", "", "task `type`")
	fl.StringVar(&f.status, "status", "", "next_run_not_scheduled, next_run_scheduled, completed or disabled")
	fl.StringVar(&f.priority, "priority", "", "high, normal, low or none")
	fl.StringVar(&f.policy, "policy", "", "oneshot or recurring")
	fl.StringVar(&f.before, "before", "", "next run before this `time` (RFC 3339 or date)")
	fl.StringVar(&f.after, "after", "", "next run at or after this `time` (RFC 3339 or date)")
	fl.BoolVar(&runs, "runs", false, "list the runs of the selected tasks")
	return cmd
}

// printTasksPage prints tasks, or their runs.
func (a *app) printTasksPage(cmd *cobra.Command, st store.Store, rw *rowWriter, ts []revisit.Task, runs bool) error {
	if !runs {
		for _, t := range ts {
			if err := rw.Row(taskRow(t)...); err != nil {
				return err
			}
		}
		return nil
	}
	ids := make([]int64, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	rs, err := st.TaskRunsGet(cmd.Context(), ids)
	if err != nil {
		return fmt.Errorf("list task runs: %w", err)
	}
	for _, r := range rs {
		if err := rw.Row(taskRunRow(r)...); err != nil {
			return err
		}
	}
	return nil
}

func (a *app) taskListPendingCommand() *cobra.Command {
	var before string
	var limit int
	cmd := &cobra.Command{
		Use:   "list-pending TYPE...",
		Short: "List the tasks due, in the order they will be dispatched",
		Long: `List the tasks of each TYPE that are due (not scheduled, next run passed),
without changing them: first those with a priority (high, normal, low), then
the others, oldest next run first; at most --limit of each kind per type.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("want arguments TYPE..., got none")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			now := a.now()
			if before != "" {
				t, err := parseTime("--before", before)
				if err != nil {
					return usageError{err}
				}
				now = t
			}
			if err := revisit.ReadyTasksLimit.Check(limit); err != nil {
				return usageError{named("--limit", err)}
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			rw := a.rows(taskColumns)
			for _, typ := range args {
				for _, priority := range []bool{true, false} {
					ts, err := st.TasksPeekReady(cmd.Context(), revisit.ReadyTasksParams{Type: typ, Now: now, Limit: limit, Priority: priority})
					if err != nil {
						return fmt.Errorf("pending tasks of %s: %w", typ, err)
					}
					for _, t := range ts {
						if err := rw.Row(taskRow(t)...); err != nil {
							return err
						}
					}
				}
			}
			return rw.Close()
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "list what is due at this `time` (default: now)")
	cmd.Flags().IntVar(&limit, "limit", revisit.ReadyTasksLimit.Def, "most tasks of each kind per type (1 to 10000)")
	return cmd
}

// taskIDsArgs are the arguments ID... of the commands that act on tasks.
func taskIDsArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usagef("want arguments ID..., got none")
	}
	return nil
}

// parseTaskIDs reads the arguments ID... as task ids.
func parseTaskIDs(args []string) ([]int64, error) {
	ids := make([]int64, len(args))
	for i, s := range args {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return nil, usagef("ID: %q is not a task id", s)
		}
		ids[i] = id
	}
	return ids, nil
}

func (a *app) taskRespawnCommand() *cobra.Command {
	var nextRun string
	cmd := &cobra.Command{
		Use:   "respawn ID...",
		Short: "Make tasks due again",
		Long: `Make tasks due again, whatever their status: status next_run_not_scheduled,
retries back to the task type's num_retries, and next run --next-run when
given (else unchanged). Every ID must exist, or nothing changes.

Through --server, as the console does: each task is due now, and only a
disabled or completed task is respawned; the tasks are respawned one after
the other, and the first refusal stops the command.`,
		Args: taskIDsArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseTaskIDs(args)
			if err != nil {
				return err
			}
			var next *time.Time
			if nextRun != "" {
				if a.server != "" {
					return usagef("--next-run: a server respawns tasks due now; leave it out with --server")
				}
				t, err := parseTime("--next-run", nextRun)
				if err != nil {
					return usageError{err}
				}
				next = &t
			}
			st, err := a.backend(cmd)
			if err != nil {
				return err
			}
			if err := st.TasksRespawn(cmd.Context(), ids, next); err != nil {
				return fmt.Errorf("respawn: %w", err)
			}
			a.recordTaskActions(cmd.Context(), st, revisit.ActionRespawnTask, ids, revisit.TaskNextRunNotScheduled)
			return a.printSummary(fmt.Sprintf("respawned %d task(s)", len(ids)), cols("respawned"), len(ids))
		},
	}
	cmd.Flags().StringVar(&nextRun, "next-run", "", "next run `time`, RFC 3339 or a date (default: unchanged)")
	return cmd
}

func (a *app) taskRunNowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run-now ID...",
		Short: "Make tasks waiting for their next run due now",
		Long: `Make tasks waiting for their next run (status next_run_not_scheduled) due
now, their retries back to the task type's num_retries: their runner
dispatches them at its next round. A task dispatched (its run in flight),
disabled or completed is refused (respawn those), and so is an ID that does
not exist; on the store nothing changes then, through --server the tasks
are made due one after the other and the first refusal stops the command.`,
		Args: taskIDsArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseTaskIDs(args)
			if err != nil {
				return err
			}
			if a.server != "" {
				c, err := a.newClient(cmd)
				if err == nil {
					err = c.TasksRunNow(cmd.Context(), ids)
				}
				if err != nil {
					return fmt.Errorf("run-now: %w", err)
				}
			} else if err := a.runTasksNow(cmd, ids); err != nil {
				return fmt.Errorf("run-now: %w", err)
			}
			return a.printSummary(fmt.Sprintf("%d task(s) due now", len(ids)), cols("due_now"), len(ids))
		},
	}
}

// runTasksNow makes the tasks of ids due now on the store, once each is
// found waiting for its next run (revisit.TaskStatus.CheckRunNow).
func (a *app) runTasksNow(cmd *cobra.Command, ids []int64) error {
	ctx := cmd.Context()
	st, err := a.openStore(cmd)
	if err != nil {
		return err
	}
	page, err := st.TasksGet(ctx, revisit.TaskFilter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return err
	}
	found := map[int64]revisit.Task{}
	for _, t := range page.Tasks {
		found[t.ID] = t
	}
	for _, id := range ids {
		t, ok := found[id]
		if !ok {
			return revisit.Errorf(revisit.CodeNotFound, "no task %d", id)
		}
		if err := t.Status.CheckRunNow(id); err != nil {
			return err
		}
	}
	now := a.now()
	if err := st.TasksRespawn(ctx, ids, &now); err != nil {
		return err
	}
	a.recordTaskActions(ctx, st, revisit.ActionRunTaskNow, ids, revisit.TaskNextRunNotScheduled)
	return nil
}

func (a *app) taskDisableCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "disable ID...",
		Short: "Disable tasks: they are not dispatched again unless respawned",
		Long: `Set the status of tasks to disabled: the runner never dispatches them again,
unless they are respawned. Every ID must exist, or nothing changes; through
--server, the tasks are disabled one after the other, and the first error
stops the command.`,
		Args: taskIDsArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseTaskIDs(args)
			if err != nil {
				return err
			}
			st, err := a.backend(cmd)
			if err != nil {
				return err
			}
			if err := st.TasksSetStatus(cmd.Context(), ids, revisit.TaskDisabled); err != nil {
				return fmt.Errorf("disable: %w", err)
			}
			a.recordTaskActions(cmd.Context(), st, revisit.ActionDisableTask, ids, revisit.TaskDisabled)
			return a.printSummary(fmt.Sprintf("disabled %d task(s)", len(ids)), cols("disabled"), len(ids))
		},
	}
}
