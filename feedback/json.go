package feedback

import (
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
)

// jsonFields are the keys of a visit status in JSON: revisit's own and the
// upstream journal's ("type" for visit_type; "snapshot" as hex in both).
var jsonFields = []string{"origin", "visit_type", "type", "status", "date", "snapshot", "eventful"}

// ParseJSON decodes one visit status from a JSON object:
//
//	{"origin": "https://…", "visit_type": "git", "status": "full",
//	 "date": "2026-01-02T03:04:05.123456+00:00", "snapshot": "<hex>",
//	 "eventful": true}
//
// "type" is accepted for "visit_type" (the upstream journal's name);
// "snapshot" (40 hex digits, or \x and 40 hex digits) and "eventful" are
// optional; the date needs a zone. Errors name the field at fault, and the
// result is validated against the horizon h.
func ParseJSON(data []byte, h Horizon) (VisitStatus, error) {
	var v VisitStatus
	obj, err := jsonobj.Parse(data, jsonFields)
	if err != nil {
		return v, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"origin", &v.Origin}, {"status", &v.Status}} {
		if _, err := obj.Decode(f.name, f.dst, "a string"); err != nil {
			return v, err
		}
	}
	var vt, typ string
	if _, err := obj.Decode("visit_type", &vt, "a string"); err != nil {
		return v, err
	}
	if _, err := obj.Decode("type", &typ, "a string"); err != nil {
		return v, err
	}
	switch {
	case vt != "" && typ != "" && vt != typ:
		return v, revisit.Invalidf("type", "%q disagrees with visit_type %q", typ, vt)
	case vt != "":
		v.VisitType = vt
	default:
		v.VisitType = typ
	}
	date, err := obj.Time("date")
	if err != nil {
		return v, err
	}
	if date != nil {
		v.Date = *date
	}
	var snapshot string
	if ok, err := obj.Decode("snapshot", &snapshot, "a hex string"); err != nil {
		return v, err
	} else if ok {
		if v.Snapshot, err = revisit.ParseSnapshotID("snapshot", strings.TrimPrefix(snapshot, "\\x")); err != nil {
			return v, err
		}
	}
	var eventful bool
	if ok, err := obj.Decode("eventful", &eventful, "true or false"); err != nil {
		return v, err
	} else if ok {
		v.Eventful = &eventful
	}
	return v, v.Validate(h)
}
