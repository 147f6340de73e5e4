package swhwire

import (
	"reflect"
	"testing"
	"time"
)

func TestTimedelta(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want Timedelta
	}{
		{-time.Microsecond, Timedelta{Days: -1, Seconds: 86399, Microseconds: 999999}},
		{36*time.Hour + 1500*time.Nanosecond, Timedelta{Days: 1, Seconds: 43200, Microseconds: 1}},
		{-49 * time.Hour, Timedelta{Days: -3, Seconds: 82800}},
	} {
		got := NewTimedelta(c.d)
		if got != c.want {
			t.Errorf("NewTimedelta(%v) = %+v, want %+v", c.d, got, c.want)
		}
		if back, ok := got.Duration(); !ok || back != c.d.Truncate(time.Microsecond) {
			t.Errorf("%+v.Duration() = %v, %v", got, back, ok)
		}
	}
	if _, ok := (Timedelta{Days: 999999999}).Duration(); ok {
		t.Error("999999999 days fit a time.Duration")
	}
}

func TestErrorBody(t *testing.T) {
	e := Exception{Type: "StaleData", Module: "swh.scheduler.exc", Args: []any{"Stale data; Lister state not updated"}, Message: "Stale data"}
	b, err := Encode(e.Body())
	if err != nil {
		t.Fatal(err)
	}
	v, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(Map); !ok {
		t.Fatalf("the error body decoded to a %T, want a plain Map", v)
	}
	got, err := ParseException(v)
	if err != nil || !reflect.DeepEqual(got, e) {
		t.Errorf("ParseException = %+v, %v; want %+v", got, err, e)
	}
	if _, err := ParseException(Map{{"type", "X"}}); err == nil {
		t.Error("an error body without module and args was accepted")
	}
}
