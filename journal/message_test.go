package journal

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bytesOf concatenates parts: a string in double quotes is its bytes, any
// other part is hex digits (spaces allowed), as journal.md writes vectors.
func bytesOf(t testing.TB, parts ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, p := range parts {
		if strings.HasPrefix(p, `"`) {
			b.WriteString(strings.Trim(p, `"`))
			continue
		}
		h, err := hex.DecodeString(strings.ReplaceAll(p, " ", ""))
		require.NoError(t, err)
		b.Write(h)
	}
	return b.Bytes()
}

const snapshotHex = "9b922e6d8d5b803c1582aabe5525b7b91150788e"

// The vectors of journal.md: a key and a value as swh.journal writes them.
func keyVector(t testing.TB) []byte {
	return bytesOf(t, "83 a4", `"date"`, "d9 20", `"2026-11-25 12:00:00.123456+00:00"`, "a6", `"origin"`,
		"b6", `"https://github.com/o/r"`, "a5", `"visit"`, "a1", `"3"`)
}

func valueVector(t testing.TB) []byte {
	return bytesOf(t, "87 a6", `"origin"`, "b6", `"https://github.com/o/r"`, "a5", `"visit"`, "03", "a4", `"date"`,
		"d7ff1d6f28006b06cdc0", "a6", `"status"`, "a4", `"full"`, "a8", `"snapshot"`, "c414", snapshotHex,
		"a4", `"type"`, "a3", `"git"`, "a8", `"metadata"`, "c0")
}

var vectorDate = time.Date(2026, 11, 25, 12, 0, 0, 123456000, time.UTC)

func TestDecodeVectors(t *testing.T) {
	k, err := DecodeKey(keyVector(t))
	require.NoError(t, err)
	require.Equal(t, Key{Origin: "https://github.com/o/r", Visit: "3", Date: "2026-11-25 12:00:00.123456+00:00"}, k)

	m, err := DecodeValue(valueVector(t))
	require.NoError(t, err)
	snap, _ := hex.DecodeString(snapshotHex)
	require.Equal(t, Message{Origin: "https://github.com/o/r", Visit: 3, Date: vectorDate, Status: "full",
		Snapshot: snap, Type: "git"}, m)
}

// TestDecodeVariants: the old datetime envelope, nil snapshot and type,
// keys in another order and keys revisit does not read.
func TestDecodeVariants(t *testing.T) {
	envelope := bytesOf(t, "82 c4 07", `"swhtype"`, "a8", `"datetime"`, "c4 01", `"d"`,
		"d9 20", `"2026-11-25T13:00:00.123456+01:00"`)
	v := bytesOf(t, "88 a6", `"status"`, "a7", `"partial"`, "a4", `"date"`)
	v = append(v, envelope...)
	v = append(v, bytesOf(t, "a6", `"origin"`, "a3", `"x:y"`, "a5", `"visit"`, "cd 01 00", "a8", `"snapshot"`, "c0",
		"a4", `"type"`, "c0", "a8", `"metadata"`, "81 a1", `"k"`, "01", "a5", `"extra"`, "c3")...)
	m, err := DecodeValue(v)
	require.NoError(t, err)
	require.Equal(t, Message{Origin: "x:y", Visit: 256, Date: vectorDate, Status: "partial"}, m)
}

func TestDecodeRefuses(t *testing.T) {
	valid := valueVector(t)
	replace := func(old, new string) []byte {
		out := bytes.Replace(valid, bytesOf(t, old), bytesOf(t, new), 1)
		require.NotEqual(t, valid, out, "the vector holds %s", old)
		return out
	}
	for _, c := range []struct {
		name, kind, want string
		in               []byte
	}{
		{"truncated", KindMsgpack, "at byte 106: str of 8 bytes, only 4 left", valid[:len(valid)-5]},
		{"not a map", KindShape, "the value is a array, not a map", bytesOf(t, "91 01")},
		{"missing origin", KindShape, "origin: missing", bytesOf(t, "81 a5", `"visit"`, "03")},
		{"visit as str", KindShape, "visit: want an int of 64 bits, got str", replace("a5 76697369 74 03", "a5 76697369 74 a1 33")},
		{"date as str", KindShape, "date: want timestamp, got str", replace("d7ff1d6f28006b06cdc0", "a3 616263")},
		{"unknown status", KindStatus, `"done" is not one of`, replace("a4 66756c6c", "a4 646f6e65")},
		{"19-byte snapshot", KindSnapshot, "want 20 bytes, got 19", replace("c414 "+snapshotHex, "c413 "+snapshotHex[:38])},
		{"snapshot as str", KindShape, "snapshot: want bin, got str", replace("c414 "+snapshotHex, "a4 61626364")},
		{"type as int", KindShape, "type: want str, got int", replace("a3 676974", "07")},
		{"non-UTF-8 origin", KindMsgpack, "not valid UTF-8", replace("b6 68747470", "b6 ff747470")},
	} {
		_, err := DecodeValue(c.in)
		require.ErrorContains(t, err, c.want, c.name)
		require.Equal(t, c.kind, KindOf(err), c.name)
	}
	_, err := DecodeKey(bytesOf(t, "81 a6", `"origin"`, "01"))
	require.ErrorContains(t, err, "origin: want str, got int")
}

// FuzzDecodeValue: any bytes decode to a message or a *MalformedError,
// never a panic; a message has a known status and a 20-byte snapshot or
// none.
func FuzzDecodeValue(f *testing.F) {
	f.Add(valueVector(f))
	f.Add(keyVector(f))
	f.Add(valueVector(f)[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeValue(b)
		if err != nil {
			if KindOf(err) == "" {
				t.Fatalf("error without kind: %v", err)
			}
			return
		}
		if m.Snapshot != nil && len(m.Snapshot) != snapshotLen {
			t.Fatalf("a snapshot of %d bytes", len(m.Snapshot))
		}
		if !slices.Contains([]string{"created", "ongoing", "full", "partial", "failed", "not_found"}, m.Status) {
			t.Fatalf("status %q", m.Status)
		}
		_, _ = DecodeKey(b)
	})
}
