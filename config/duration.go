package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Duration is a time.Duration that reads and writes the forms of
// ParseDuration and FormatDuration, in YAML, JSON and flags.
type Duration time.Duration

// UnmarshalText parses text with ParseDuration.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := ParseDuration(string(text))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats d with FormatDuration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(FormatDuration(time.Duration(d))), nil }

// String formats d with FormatDuration.
func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// Set parses s with ParseDuration, so that a *Duration is a pflag.Value.
func (d *Duration) Set(s string) error { return d.UnmarshalText([]byte(s)) }

// Type names the flag value type in help texts.
func (d *Duration) Type() string { return "duration" }

const (
	day  = 24 * time.Hour
	week = 7 * day
)

// durationUnits maps every accepted unit name to its length.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "μs": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ms": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": day, "day": day, "days": day,
	"w": week, "week": week, "weeks": week,
}

// ParseDuration parses a non-negative duration written the Go way ("12h",
// "1h30m", "90m"), with days and weeks ("64d", "1d12h", "2w"), in words
// ("90 days", "1 day", "12 hours", "30 minutes", "1 day 12 hours"), or the
// way PostgreSQL and Python print intervals ("1 day, 12:00:00", "01:30:00").
// Numbers may have a fraction ("1.5h", "0.5 days"); "0" is zero.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%q is not a duration (%s; e.g. 12h, 90m, 64d, \"90 days\", \"1 day, 12:00:00\")", s, why)
	}
	rest := strings.TrimPrefix(in, "+")
	if rest == "0" {
		return 0, nil
	}
	var total float64 // nanoseconds; float so that overflow is detectable
	parts := 0
	for {
		rest = strings.TrimLeftFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
		if rest == "" {
			break
		}
		// A clock "H:MM" or "H:MM:SS[.frac]" may end the text.
		num := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789."))]
		if num == "" {
			return bad("expected a number")
		}
		after := rest[len(num):]
		if strings.HasPrefix(after, ":") {
			c, err := parseClock(rest)
			if err != nil {
				return bad(err.Error())
			}
			total += float64(c)
			parts++
			rest = ""
			break
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return bad(fmt.Sprintf("%q is not a number", num))
		}
		after = strings.TrimLeftFunc(after, unicode.IsSpace)
		unit := after[:len(after)-len(strings.TrimLeftFunc(after, func(r rune) bool {
			return unicode.IsLetter(r) || r == 'µ'
		}))]
		if unit == "" {
			return bad(fmt.Sprintf("%s has no unit", num))
		}
		u, ok := durationUnits[strings.ToLower(unit)]
		if !ok {
			return bad(fmt.Sprintf("unknown unit %q", unit))
		}
		total += v * float64(u)
		parts++
		rest = after[len(unit):]
	}
	if parts == 0 {
		return bad("expected a number")
	}
	if total >= math.MaxInt64 {
		return bad("too long")
	}
	return time.Duration(math.Round(total)), nil
}

// parseClock parses "H:MM" or "H:MM:SS[.frac]".
func parseClock(s string) (time.Duration, error) {
	f := strings.Split(s, ":")
	if len(f) < 2 || len(f) > 3 {
		return 0, fmt.Errorf("%q is not a clock H:MM:SS", s)
	}
	h, err1 := strconv.ParseUint(f[0], 10, 32)
	m, err2 := strconv.ParseUint(f[1], 10, 8)
	if err1 != nil || err2 != nil || m > 59 || len(f[1]) != 2 {
		return 0, fmt.Errorf("%q is not a clock H:MM:SS", s)
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if len(f) == 3 {
		sec, err := strconv.ParseFloat(f[2], 64)
		if err != nil || sec < 0 || sec >= 60 || len(f[2]) < 2 || f[2][0] == '+' {
			return 0, fmt.Errorf("%q is not a clock H:MM:SS", s)
		}
		d += time.Duration(math.Round(sec * float64(time.Second)))
	}
	return d, nil
}

// FormatDuration writes d in the shortest form ParseDuration reads back:
// days, hours, minutes and seconds ("64d", "1d12h", "90m" → "1h30m", "0").
// Durations below a second, or with a fraction of a second, use Go's form.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	if d < 0 || d%time.Second != 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		len  time.Duration
	}{{"d", day}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.len; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10))
			b.WriteString(u.name)
			d -= n * u.len
		}
	}
	return b.String()
}
