package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/jsonobj"
)

// originLine is one parsed line of `origin record` input. The lister is
// named by ID, or by Name and Instance (then ID is nil until the lister is
// looked up).
type originLine struct {
	Origin   revisit.ListedOrigin
	ListerID *uuid.UUID
	Name     string
	Instance string
}

// originLineFields are the keys of an input line.
var originLineFields = []string{"url", "visit_type", "lister_id", "lister_name", "lister_instance_name",
	"extra_loader_arguments", "enabled", "last_update", "is_fork", "forked_from_url"}

// placeholderLister stands for a lister named by name while a line is
// validated.
var placeholderLister = uuid.MustParse("00000000-0000-0000-0000-000000000001")

// parseOriginLine parses one JSON object of `origin record` input. Errors
// name the field at fault (*revisit.Error with a Field when there is one).
func parseOriginLine(line []byte) (originLine, error) {
	var out originLine
	obj, err := jsonobj.Parse(line, originLineFields)
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
	if err := o.Validate(); err != nil {
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

// maxLineLength bounds one input line.
const maxLineLength = 1 << 20

// errLineTooLong is the error of a line longer than maxLineLength.
var errLineTooLong = fmt.Errorf("longer than %d bytes (1 MiB)", maxLineLength)

// lineReader reads lines of at most maxLineLength bytes; it reports a longer
// line as errLineTooLong and goes on with the next one.
type lineReader struct {
	r    *bufio.Reader
	n    int // number of the last line read, from 1
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its end of line. It returns io.EOF at
// the end, errLineTooLong for a line too long (then the caller may go on),
// and any read error.
func (lr *lineReader) next() ([]byte, error) {
	lr.long = lr.long[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.long)+len(chunk) > maxLineLength+2 { // room for "\r\n"
				tooLong = true
			} else {
				lr.long = append(lr.long, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			if len(lr.long) == 0 && !tooLong {
				return nil, io.EOF
			}
		} else if err != nil {
			return nil, err
		}
		lr.n++
		if tooLong {
			return nil, errLineTooLong
		}
		line := bytes.TrimRight(lr.long, "\r\n")
		if lr.n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a byte-order mark
		}
		if len(line) > maxLineLength {
			return nil, errLineTooLong
		}
		return line, nil
	}
}

// eachLine calls fn with every non-blank line of r and its number (from 1);
// a line longer than maxLineLength comes with errLineTooLong instead of its
// text. It stops at the first error of fn or of reading.
func eachLine(r io.Reader, fn func(n int, line []byte, tooLong error) error) error {
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, errLineTooLong):
			if err := fn(lr.n, nil, err); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("read: %w", err)
		case !isBlank(line):
			if err := fn(lr.n, line, nil); err != nil {
				return err
			}
		}
	}
}
