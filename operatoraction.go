package revisit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// OperatorAction is one change an operator made to how the scheduler runs
// (docs/actions.md, "Who did what"): a console action through the API, or
// a command of the CLI acting on the store. The store keeps them for
// OperatorActionRetention.
type OperatorAction struct {
	// ID orders the actions as they were recorded; the store sets it.
	ID int64
	// At is when the action was done.
	At time.Time
	// By names who did it: an API token's name, "anonymous", or cli:USER.
	By string
	// Action names what was done, as pause or visit_now.
	Action string
	// Target is what it was done to: a visit type, an origin
	// (OriginTarget), a task (TaskTarget), a lister, a queue.
	Target string
	// Answer is a small JSON object of what came of it, as {"changed":2}
	// (ActionAnswer); empty means {}.
	Answer json.RawMessage
}

// The actions of the console and of the CLI on the store
// (OperatorAction.Action).
const (
	ActionVisitNow       = "visit_now"
	ActionDisableOrigin  = "disable_origin"
	ActionEnableOrigin   = "enable_origin"
	ActionPause          = "pause"
	ActionResume         = "resume"
	ActionRequeueLost    = "requeue_lost"
	ActionDisableTask    = "disable_task"
	ActionRespawnTask    = "respawn_task"
	ActionRunTaskNow     = "run_task_now"
	ActionRefreshMetrics = "refresh_metrics"
	ActionPurgeQueue     = "purge_queue"
	ActionDropMessage    = "drop_message"
	ActionRequeueMessage = "requeue_message"
)

// OperatorActionRetention is how long the store keeps an action: recording
// one deletes those done more than this before it.
const OperatorActionRetention = 90 * 24 * time.Hour

// The bounds of the fields of an OperatorAction.
const (
	MaxActionByLength     = MaxPauseByLength
	MaxActionTargetLength = MaxURLLength + 256
	MaxActionAnswerLength = 4096
)

// actionPattern is the rule of OperatorAction.Action.
var actionPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ValidateActionName checks the name of an action: lower-case letters,
// digits and '_', starting with a letter, at most 64.
func ValidateActionName(action string) error {
	if !actionPattern.MatchString(action) {
		return Invalidf("action", "%q is not an action name (lower-case letters, digits, '_'; at most 64)", action)
	}
	return nil
}

// Resolve checks an action to record and returns it with its answer in
// canonical JSON (keys sorted, no spaces; {} when empty) and At at the
// stores' precision, in UTC.
func (a OperatorAction) Resolve() (OperatorAction, error) {
	if err := ValidateActionName(a.Action); err != nil {
		return a, err
	}
	if err := validateActionText("by", a.By, MaxActionByLength); err != nil {
		return a, err
	}
	if err := validateActionText("target", a.Target, MaxActionTargetLength); err != nil {
		return a, err
	}
	if a.At.IsZero() {
		return a, Invalidf("at", "missing")
	}
	if err := ValidateTime("at", a.At); err != nil {
		return a, err
	}
	answer, err := CanonicalAnswer(a.Answer)
	if err != nil {
		return a, err
	}
	a.Answer, a.At = answer, Microsecond(a.At).UTC()
	return a, nil
}

// validateActionText checks a required text field of an action: at most
// max bytes of valid UTF-8 without control characters.
func validateActionText(field, s string, max int) error {
	switch {
	case s == "":
		return Invalidf(field, "missing")
	case len(s) > max:
		return Invalidf(field, "%d bytes long, at most %d", len(s), max)
	case strings.ContainsFunc(s, unicode.IsControl):
		return Invalidf(field, "%q holds a control character (NUL, newline, tab…)", s)
	}
	return ValidateText(field, s)
}

// CanonicalAnswer returns the answer of an action as the stores keep it:
// one JSON object, keys sorted, without spaces, of at most
// MaxActionAnswerLength bytes and without NUL; {} when empty. Anything
// else is an invalid-input error naming answer.
func CanonicalAnswer(answer json.RawMessage) (json.RawMessage, error) {
	if len(answer) == 0 {
		return json.RawMessage("{}"), nil
	}
	d := json.NewDecoder(bytes.NewReader(answer))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil || obj == nil || d.More() {
		return nil, Invalidf("answer", "not one JSON object")
	}
	out, err := json.Marshal(obj)
	switch {
	case err != nil:
		return nil, Invalidf("answer", "not one JSON object")
	case len(out) > MaxActionAnswerLength:
		return nil, Invalidf("answer", "%d bytes long, at most %d", len(out), MaxActionAnswerLength)
	case bytes.Contains(out, []byte(`\u0000`)):
		return nil, Invalidf("answer", "holds a NUL character")
	}
	return out, nil
}

// ActionAnswer returns the answer of an action from key-value pairs, as
// log/slog takes them ("changed", 2, "queue", "q"): a JSON object of the
// values as encoding/json writes them, each key as fmt.Sprint writes it. A
// key without a value, at the end, is left out; a value encoding/json
// cannot write makes the answer {"error": why}.
func ActionAnswer(attrs ...any) json.RawMessage {
	obj := make(map[string]any, len(attrs)/2)
	for i := 0; i+1 < len(attrs); i += 2 {
		obj[fmt.Sprint(attrs[i])] = attrs[i+1]
	}
	out, err := json.Marshal(obj)
	if err != nil {
		out, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return out
}

// OriginTarget is the target of an action on an origin: "URL
// (VISIT_TYPE)".
func OriginTarget(key OriginKey) string { return key.URL + " (" + key.VisitType + ")" }

// TaskTarget is the target of an action on a generic task: "task ID".
func TaskTarget(id int64) string { return "task " + strconv.FormatInt(id, 10) }

// ListerTarget is the target of an action on one lister's data, "lister
// ID", or on every lister's (id nil), "every lister".
func ListerTarget(id *uuid.UUID) string {
	if id == nil {
		return EveryLister
	}
	return "lister " + id.String()
}

// EveryLister names every lister, in the target and the answers of
// actions.
const EveryLister = "every lister"

// OperatorActionPageSize is the rule of the size of a page of actions.
var OperatorActionPageSize = Limit{Field: "limit", Min: 1, Max: 1000, Def: 100}

// OperatorActionFilter selects one page of the recorded actions, newest
// (last recorded) first.
type OperatorActionFilter struct {
	// Action, when set, keeps the actions of that name.
	Action string
	// By, when set, keeps the actions of who did them.
	By string
	// Limit is the page size (OperatorActionPageSize); zero means its
	// default.
	Limit int
	// PageToken continues a previous page; empty starts at the newest.
	PageToken string
}

// Validate checks every field but the page token, naming the first bad
// one.
func (f OperatorActionFilter) Validate() error {
	if f.Action != "" {
		if err := ValidateActionName(f.Action); err != nil {
			return err
		}
	}
	if f.By != "" {
		if err := validateActionText("by", f.By, MaxActionByLength); err != nil {
			return err
		}
	}
	if f.Limit != 0 {
		return OperatorActionPageSize.Check(f.Limit)
	}
	return nil
}

// OperatorActionPage is one page of actions, newest first. NextPageToken
// is empty exactly when no older action follows.
type OperatorActionPage struct {
	Actions       []OperatorAction
	NextPageToken string
}
