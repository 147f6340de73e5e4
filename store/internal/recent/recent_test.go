package recent

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/revisit-sched/revisit"
)

// five are five results, newest first, of every status, one eventful.
var five = []revisit.RecentResult{
	{Date: time.Date(2026, 3, 5, 12, 0, 0, 123456000, time.UTC), Status: revisit.VisitSuccessful, Eventful: true},
	{Date: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC), Status: revisit.VisitSuccessful},
	{Date: time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC), Status: revisit.VisitFailed},
	{Date: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), Status: revisit.VisitNotFound},
	{Date: time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC), Status: revisit.VisitFailed},
}

func TestRoundTrip(t *testing.T) {
	for n := range len(five) + 1 {
		b := Encode(five[:n])
		if len(b) != size*n {
			t.Fatalf("%d results: %d bytes, want %d", n, len(b), size*n)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%d results: %v", n, err)
		}
		if n == 0 {
			if b != nil || got != nil {
				t.Fatalf("no results: stored %v, decoded %v; want nil (NULL) and nil", b, got)
			}
			continue
		}
		if len(got) != n {
			t.Fatalf("%d results decoded as %d", n, len(got))
		}
		for i := range got {
			if !got[i].Date.Equal(five[i].Date) || got[i].Date.Location() != time.UTC ||
				got[i].Status != five[i].Status || got[i].Eventful != five[i].Eventful {
				t.Errorf("result %d: %+v, want %+v in UTC", i, got[i], five[i])
			}
		}
	}
}

// The stored form, byte for byte: the format of the column is the
// package's contract with the databases that keep it.
func TestEncodeLayout(t *testing.T) {
	got := hex.EncodeToString(Encode(five[:2]))
	want := "00064c45ad0e7240" + "81" + "00064c318f353000" + "01"
	if got != want {
		t.Fatalf("stored %s, want %s", got, want)
	}
	late := time.Date(2026, 3, 5, 12, 0, 0, 123456789, time.UTC)
	if !bytes.Equal(Encode([]revisit.RecentResult{{Date: late, Status: revisit.VisitFailed}}),
		Encode([]revisit.RecentResult{{Date: late.Truncate(time.Microsecond), Status: revisit.VisitFailed}})) {
		t.Fatal("dates are kept to the microsecond")
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := Encode(five[:1])
	with := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	six := Encode(five)
	six = append(six, good...)
	zero := Encode([]revisit.RecentResult{{Date: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), Status: revisit.VisitFailed}})
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{good[:8], "8 bytes, not a multiple of 9"},
		{append(bytes.Clone(good), 0), "10 bytes, not a multiple of 9"},
		{with(8, 0), "result 0: status byte 0x00 is no status"},
		{with(8, 4), "result 0: status byte 0x04 is no status"},
		{with(8, 0x41), "result 0: status byte 0x41 is no status"},
		{with(8, 0x82), "recent[0].eventful: a failed visit is not eventful"},
		{six, "recent: at most 5 results, not 6"},
		{zero, "recent[0].date: missing"},
	} {
		got, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%x) = %v, %v; want an error with %q", c.b, got, err, c.want)
		}
		if errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("Decode(%x): %v is an invalid-input error; stored data is not the caller's input", c.b, err)
		}
	}
}

func TestIntoNamesTheOrigin(t *testing.T) {
	st := revisit.VisitStats{URL: "https://forge.example/a", VisitType: "git"}
	err := Into(&st, []byte{1, 2, 3})
	if err == nil || !strings.Contains(err.Error(), "https://forge.example/a (git)") {
		t.Fatalf("Into: %v; want an error naming the origin", err)
	}
	if err := Into(&st, Encode(five[:2])); err != nil || len(st.Recent) != 2 {
		t.Fatalf("Into: %v, %d results; want 2", err, len(st.Recent))
	}
	if err := Into(&st, nil); err != nil || st.Recent != nil {
		t.Fatalf("Into NULL: %v, %v; want no results", err, st.Recent)
	}
}

func TestValidate(t *testing.T) {
	if err := Validate(five); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    revisit.RecentResult
		want string
	}{
		{revisit.RecentResult{Status: revisit.VisitFailed}, "recent[0].date: missing"},
		{revisit.RecentResult{Date: five[0].Date, Status: "partial"}, `recent[0].status: "partial" is not successful, failed or not_found`},
		{revisit.RecentResult{Date: five[0].Date, Status: revisit.VisitNotFound, Eventful: true}, "recent[0].eventful: a not_found visit is not eventful"},
	} {
		err := Validate([]revisit.RecentResult{c.r})
		if !errors.Is(err, revisit.ErrInvalid) || err.Error() != c.want {
			t.Errorf("Validate(%+v) = %v; want the invalid-input error %q", c.r, err, c.want)
		}
	}
}

// FuzzDecode: no stored value makes Decode panic; what decodes is a valid
// list, stored again as the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(five))
	f.Add(Encode(five[:1]))
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x83})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if err != nil {
			return
		}
		if err := Validate(got); err != nil {
			t.Fatalf("Decode(%x) = %+v, which is not valid: %v", b, got, err)
		}
		if again := Encode(got); !bytes.Equal(again, b) {
			t.Fatalf("Decode(%x) = %+v, stored again as %x", b, got, again)
		}
	})
}
