package recording

import (
	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
)

// Line is one parsed line of JSON-lines input (revisit origin record):
// a listed origin and the lister it names, by ID, or by Name and Instance
// (then ListerID is nil, and Origin.ListerID the nil UUID, until the
// lister is resolved).
type Line struct {
	Origin   revisit.ListedOrigin
	ListerID *uuid.UUID
	Name     string
	Instance string
}

// lineFields are the keys of an input line.
var lineFields = []string{"url", "visit_type", "lister_id", "lister_name", "lister_instance_name",
	"extra_loader_arguments", "enabled", "last_update", "is_fork", "forked_from_url"}

// placeholderLister stands for a lister named by name while a line is
// validated.
var placeholderLister = uuid.MustParse("00000000-0000-0000-0000-000000000001")

// ParseLine parses and validates one JSON object of origin input. Errors
// name the field at fault (*revisit.Error with a Field when there is one).
func ParseLine(line []byte) (Line, error) {
	var out Line
	obj, err := jsonobj.Parse(line, lineFields)
	if err != nil {
		return out, err
	}
	field := obj.Decode
	var (
		u, vt, listerID, name, instance, forkedFrom string
		enabled, isFork                             bool
		extra                                       map[string]any
	)
	o := &out.Origin
	for _, f := range []struct {
		name string
		dst  any
		want string
	}{
		{"url", &u, "a string"}, {"visit_type", &vt, "a string"},
		{"lister_id", &listerID, "a string"}, {"lister_name", &name, "a string"},
		{"lister_instance_name", &instance, "a string"},
		{"extra_loader_arguments", &extra, "an object"},
		{"forked_from_url", &forkedFrom, "a string"},
	} {
		if _, err := field(f.name, f.dst, f.want); err != nil {
			return out, err
		}
	}
	o.Enabled = true
	if ok, err := field("enabled", &enabled, "true or false"); err != nil {
		return out, err
	} else if ok {
		o.Enabled = enabled
	}
	if ok, err := field("is_fork", &isFork, "true or false"); err != nil {
		return out, err
	} else if ok {
		o.IsFork = &isFork
	}
	if obj.Has("forked_from_url") {
		o.ForkedFromURL = &forkedFrom
	}
	o.URL, o.VisitType = u, vt
	o.ExtraLoaderArguments = extra
	if o.ExtraLoaderArguments == nil {
		o.ExtraLoaderArguments = map[string]any{}
	}
	if o.LastUpdate, err = obj.Time("last_update"); err != nil {
		return out, err
	}

	// The lister is checked after the origin's own fields.
	var listerErr error
	o.ListerID = placeholderLister
	switch {
	case listerID != "" && (name != "" || instance != ""):
		listerErr = revisit.Invalidf("lister_id", "give lister_id, or lister_name (and lister_instance_name), not both")
	case listerID != "":
		id, err := revisit.ParseUUID("lister_id", listerID)
		if err == nil && id == uuid.Nil {
			err = revisit.Invalidf("lister_id", "the nil UUID names no lister")
		}
		if err != nil {
			listerErr = err
		} else {
			out.ListerID = &id
			o.ListerID = id
		}
	case name != "":
		out.Name, out.Instance = name, instance
	case instance != "":
		listerErr = revisit.Invalidf("lister_name", "missing (lister_instance_name needs it)")
	default:
		listerErr = revisit.Invalidf("lister_name", "missing (give lister_id, or lister_name and optionally lister_instance_name)")
	}
	if err := o.ValidateAbsolute(); err != nil {
		return out, err
	}
	if listerErr != nil {
		return out, listerErr
	}
	if out.ListerID == nil {
		o.ListerID = uuid.Nil
	}
	return out, nil
}
