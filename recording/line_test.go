package recording_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/recording"
)

func TestParseLine(t *testing.T) {
	t.Parallel()
	ol, err := recording.ParseLine([]byte(`{"url": "https://github.com/a/b", "visit_type": "git", "lister_name": "github",
		"lister_instance_name": "github", "extra_loader_arguments": {"n": 12345678901234567890, "s": "x"},
		"last_update": "2024-05-01T14:00:00+02:00", "is_fork": true, "forked_from_url": "https://github.com/c/b"}`))
	require.NoError(t, err)
	require.Nil(t, ol.ListerID)
	require.Equal(t, "github", ol.Name)
	require.Equal(t, "github", ol.Instance)
	o := ol.Origin
	require.Equal(t, uuid.Nil, o.ListerID)
	require.Equal(t, "https://github.com/a/b", o.URL)
	require.Equal(t, "git", o.VisitType)
	require.True(t, o.Enabled, "enabled defaults to true")
	require.Equal(t, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), *o.LastUpdate)
	require.Equal(t, "12345678901234567890", string(o.ExtraLoaderArguments["n"].(interface{ String() string }).String()))
	require.True(t, *o.IsFork)
	require.Equal(t, "https://github.com/c/b", *o.ForkedFromURL)

	id := uuid.New()
	ol, err = recording.ParseLine([]byte(`{"url": "https://pypi.org/project/x/", "visit_type": "pypi", "lister_id": "` +
		id.String() + `", "enabled": false, "last_update": null, "extra_loader_arguments": null}`))
	require.NoError(t, err)
	require.Equal(t, id, *ol.ListerID)
	require.Equal(t, id, ol.Origin.ListerID)
	require.False(t, ol.Origin.Enabled)
	require.Nil(t, ol.Origin.LastUpdate)
	require.Nil(t, ol.Origin.IsFork)
	require.NotNil(t, ol.Origin.ExtraLoaderArguments)

	_, err = recording.ParseLine([]byte(`{"url": "https://x.org/r", "visit_type": "hg", "lister_name": "hg"}`))
	require.NoError(t, err, "the instance name is optional")
}

func TestParseLineErrors(t *testing.T) {
	t.Parallel()
	const ok = `"url": "https://x.org/r", "visit_type": "git", "lister_name": "l"`
	for line, want := range map[string]string{
		`{"url": "https://x.org/r"`:   "malformed JSON: unexpected EOF",
		`{"url": "https://x.org/r",}`: "malformed JSON: invalid character '}'",
		`not json`:                    "malformed JSON: invalid character 'o' in literal null",
		`[1, 2]`:                      "want a JSON object, got array",
		`"x"`:                         "want a JSON object, got string",
		`null`:                        "want a JSON object, got null",
		`{` + ok + `} {}`:             "malformed JSON: text after the object",
		`{"visit_type": "git", "lister_name": "l"}`:                                                                    "url: missing",
		`{"url": 3, "visit_type": "git", "lister_name": "l"}`:                                                          "url: want a string, got 3",
		`{"url": "nope", "visit_type": "git", "lister_name": "l"}`:                                                     `url: "nope" is not an absolute URL`,
		`{"url": "https://x.org/a b", "visit_type": "git", "lister_name": "l"}`:                                        "url: \"https://x.org/a b\" contains white space",
		`{"url": "https://x.org/r", "visit_type": "Git!", "lister_name": "l"}`:                                         `visit_type: "Git!" is not a visit type`,
		`{"url": "https://x.org/r", "lister_name": "l"}`:                                                               `visit_type: "" is not a visit type`,
		`{` + ok + `, "colour": "red"}`:                                                                                `colour: unknown field`,
		`{` + ok + `, "URL": "https://x.org/r"}`:                                                                       `URL: unknown field`,
		`{` + ok + `, "last_update": "2024-01-01"}`:                                                                    `last_update: want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "2024-01-01"`,
		`{` + ok + `, "last_update": "2024-01-01T00:00:00"}`:                                                           `last_update: want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "2024-01-01T00:00:00"`,
		`{` + ok + `, "last_update": 1700000000}`:                                                                      `last_update: want a string, got 1700000000`,
		`{` + ok + `, "enabled": "yes"}`:                                                                               `enabled: want true or false, got "yes"`,
		`{` + ok + `, "is_fork": 1}`:                                                                                   `is_fork: want true or false, got 1`,
		`{` + ok + `, "extra_loader_arguments": [1]}`:                                                                  `extra_loader_arguments: want an object, got [1]`,
		`{` + ok + `, "url": "https://x.org/s"}`:                                                                       `url: given twice in one object`,
		"{\"url\": \"https://e.org/\xff\xfe\", \"visit_type\": \"git\", \"lister_name\": \"l\"}":                       `url: not valid UTF-8`,
		`{` + ok + `, "extra_loader_arguments": ` + strings.Repeat(`{"a": `, 33) + `1` + strings.Repeat(`}`, 33) + `}`: `extra_loader_arguments` + strings.Repeat(".a", 32) + `: nested deeper than 32 objects and arrays`,
		`{` + ok + `, "extra_loader_arguments": {"a": "` + strings.Repeat("x", 70_000) + `"}}`:                         `extra_loader_arguments: 70008 bytes as JSON, at most 65536 (64 KiB)`,
		`{` + ok + `, "forked_from_url": "x"}`:                                                                         `forked_from_url: "x" is not an absolute URL`,
		`{"url": "https://x.org/r", "visit_type": "git"}`:                                                              "lister_name: missing (give lister_id, or lister_name",
		`{"url": "https://x.org/r", "visit_type": "git", "lister_instance_name": "i"}`:                                 "lister_name: missing (lister_instance_name needs it)",
		`{"url": "https://x.org/r", "visit_type": "git", "lister_id": "xyz"}`:                                          `lister_id: want a UUID such as 0190a4e2-7c1f-7b3e-9d2a-5f6e7d8c9b0a, got "xyz"`,
		`{"url": "https://x.org/r", "visit_type": "git", "lister_id": "00000000-0000-0000-0000-000000000000"}`:         `lister_id: the nil UUID names no lister`,
		`{` + ok + `, "lister_id": "` + uuid.NewString() + `"}`:                                                        "lister_id: give lister_id, or lister_name (and lister_instance_name), not both",
	} {
		_, err := recording.ParseLine([]byte(line))
		require.Error(t, err, line)
		require.Contains(t, err.Error(), want, line)
	}
}
