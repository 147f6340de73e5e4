package cli

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/retention"
)

// taskCSVColumns are the columns of task schedule files, in order.
var taskCSVColumns = []string{"type", "args", "kwargs", "next_run", "policy", "priority"}

func (a *app) taskScheduleCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schedule FILE.csv|-",
		Short: "Create the tasks a CSV file lists",
		Long: `Create the tasks a CSV file (or standard input, -) lists, one per line, with
the columns, in this order:

  type      task type (required)
  args      positional arguments, a JSON array (empty: [])
  kwargs    keyword arguments, a JSON object (empty: {})
  next_run  first run, RFC 3339 or a date (empty: now)
  policy    oneshot or recurring (empty: recurring)
  priority  high, normal or low (empty: none)

A first line starting with the column name "type" is a header and skipped.
Every line is checked first: a bad line fails the command with an error
naming its line and column, and nothing is written. Lines identical to an
active task (or to each other) create no new task.

  type,args,kwargs,next_run,policy,priority
  load-git,[],"{""url"": ""https://github.com/x/y""}",2024-03-01T00:00:00Z,oneshot,high`,
		Args: exactArgs("FILE.csv|-"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, name, closeIn, err := a.openInput(args[0])
			if err != nil {
				return err
			}
			defer closeIn()
			tasks, lines, err := readTaskCSV(in, a.now())
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			created, err := st.TasksCreate(cmd.Context(), tasks)
			if err != nil {
				return fmt.Errorf("%s: %w; nothing written", name, taskLineError(err, lines))
			}
			distinct := map[int64]bool{}
			for _, t := range created {
				distinct[t.ID] = true
			}
			return a.printSummary(fmt.Sprintf("scheduled %d line(s) as %d task(s)", len(tasks), len(distinct)),
				cols("lines", "tasks"), len(tasks), len(distinct))
		},
	}
}

// openInput opens FILE or standard input (-) for reading.
func (a *app) openInput(arg string) (io.Reader, string, func(), error) {
	if arg == "-" {
		return a.env.Stdin, "standard input", func() {}, nil
	}
	f, err := os.Open(arg)
	if err != nil {
		return nil, arg, nil, err
	}
	return f, arg, func() { f.Close() }, nil
}

// readTaskCSV reads and checks a task schedule file, and returns its tasks
// with the line number of each.
func readTaskCSV(r io.Reader, now time.Time) ([]revisit.NewTask, []int, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var (
		tasks []revisit.NewTask
		lines []int
	)
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			return nil, nil, fmt.Errorf("line %d: not CSV: %v", perr.Line, perr.Err)
		}
		if err != nil {
			return nil, nil, err
		}
		if first && strings.TrimSpace(rec[0]) == "type" {
			continue
		}
		if len(rec) > len(taskCSVColumns) {
			return nil, nil, fmt.Errorf("line %d: %d columns, want at most %d (%s)",
				line, len(rec), len(taskCSVColumns), strings.Join(taskCSVColumns, ", "))
		}
		n, err := parseTaskRecord(rec, now)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d, %w", line, err)
		}
		tasks, lines = append(tasks, n), append(lines, line)
	}
	if len(tasks) == 0 {
		return nil, nil, errors.New("no task")
	}
	return tasks, lines, nil
}

// parseTaskRecord reads one CSV record of at most six columns; errors name
// the column.
func parseTaskRecord(rec []string, now time.Time) (revisit.NewTask, error) {
	n := revisit.NewTask{NextRun: now, Policy: revisit.TaskRecurring}
	field := func(i int) string {
		if i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	bad := func(i int, format string, args ...any) error {
		return fmt.Errorf("column %s: %s", taskCSVColumns[i], fmt.Sprintf(format, args...))
	}
	if n.Type = field(0); n.Type == "" {
		return n, bad(0, "missing")
	}
	if s := field(1); s != "" {
		if err := json.Unmarshal([]byte(s), &n.Arguments.Args); err != nil {
			return n, bad(1, "%q is not a JSON array", s)
		}
	}
	if s := field(2); s != "" {
		if err := json.Unmarshal([]byte(s), &n.Arguments.Kwargs); err != nil {
			return n, bad(2, "%q is not a JSON object", s)
		}
	}
	if s := field(3); s != "" {
		t, err := parseTime("", s)
		if err != nil {
			return n, bad(3, "%q is not an RFC 3339 time or a date", s)
		}
		n.NextRun = t
	}
	if s := field(4); s != "" {
		p, err := revisit.ParseTaskPolicy(s)
		if err != nil {
			return n, bad(4, "%s", err.(*revisit.Error).Message)
		}
		n.Policy = p
	}
	if s := field(5); s != "" {
		p, err := revisit.ParseTaskPriority(s)
		if err != nil {
			return n, bad(5, "%s", err.(*revisit.Error).Message)
		}
		n.Priority = p
	}
	return n, nil
}

var taskFieldIndex = regexp.MustCompile(`^tasks\[(\d+)\]\.?(.*)$`)

// taskLineError rewrites a store error naming tasks[i].field into one naming
// the input line and column of that task.
func taskLineError(err error, lines []int) error {
	var e *revisit.Error
	if !errors.As(err, &e) {
		return err
	}
	m := taskFieldIndex.FindStringSubmatch(e.Field)
	if m == nil {
		return err
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(lines) {
		return err
	}
	where := fmt.Sprintf("line %d", lines[i])
	if m[2] != "" {
		where += ", column " + m[2]
	}
	return fmt.Errorf("%s: %s", where, e.Message)
}

func (a *app) taskArchiveCommand() *cobra.Command {
	var olderThan config.Duration
	var to string
	cmd := &cobra.Command{
		Use:   "archive --older-than AGE --to FILE.jsonl",
		Short: "Move old task runs and finished oneshot tasks to a JSON-lines file",
		Long: `Append to FILE.jsonl, then delete from the store, the task runs that ended
more than AGE ago and then the finished (completed or disabled) oneshot tasks
none of whose runs is newer. Each line is one object with "kind" "task_run"
or "task" and the fields task list --format json prints.

Work goes page by page (1000 rows), each page written and synced to the file
before it is deleted; a write error deletes nothing of the failing page.`,
		Example: "  revisit task archive --older-than 30d --to tasks-2024.jsonl",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan <= 0 {
				return usagef("--older-than: a positive age is required (30d, 12h)")
			}
			if to == "" {
				return usagef("--to: an archive file is required")
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			c, err := retention.Archive(cmd.Context(), st, a.now().Add(-time.Duration(olderThan)), f, archiveEncoder{})
			if err != nil {
				return fmt.Errorf("archive to %s (%d runs, %d tasks archived before the error): %w", to, c.Runs, c.Tasks, err)
			}
			return a.printSummary(fmt.Sprintf("archived %d task run(s) and %d task(s) to %s", c.Runs, c.Tasks, to),
				cols("runs", "tasks", "file"), c.Runs, c.Tasks, to)
		},
	}
	cmd.Flags().Var(&olderThan, "older-than", "archive what ended longer than this `age` ago (30d, 12h; required)")
	cmd.Flags().StringVar(&to, "to", "", "JSON-lines `file` to append to (required)")
	return cmd
}

// archiveEncoder writes archived rows as task list --format json prints
// them, with a "kind" field first: "task_run" or "task".
type archiveEncoder struct{}

// TaskRun encodes an archived task run.
func (archiveEncoder) TaskRun(r revisit.TaskRun) ([]byte, error) {
	return archiveLine("task_run", taskRunColumns, taskRunRow(r))
}

// Task encodes an archived task.
func (archiveEncoder) Task(t revisit.Task) ([]byte, error) {
	return archiveLine("task", taskColumns, taskRow(t))
}

func archiveLine(kind string, cols []column, vals []any) ([]byte, error) {
	return marshalObject(append([]column{{name: "kind"}}, cols...), append([]any{kind}, vals...))
}
