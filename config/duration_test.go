package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	const d = 24 * time.Hour
	for in, want := range map[string]time.Duration{
		"0":               0,
		"12h":             12 * time.Hour,
		"90m":             90 * time.Minute,
		"1h30m":           90 * time.Minute,
		"1.5h":            90 * time.Minute,
		"500ms":           500 * time.Millisecond,
		"64d":             64 * d,
		"1d12h":           36 * time.Hour,
		"2w":              14 * d,
		"90 days":         90 * d,
		"1 day":           d,
		"12 hours":        12 * time.Hour,
		"30 minutes":      30 * time.Minute,
		"45 seconds":      45 * time.Second,
		"1 day 12 hours":  36 * time.Hour,
		"1 day, 12:00:00": 36 * time.Hour,
		"2 days 01:30":    2*d + 90*time.Minute,
		"01:30:00":        90 * time.Minute,
		"0:00:01.5":       1500 * time.Millisecond,
		"  7 Days ":       7 * d,
		"0.5 days":        12 * time.Hour,
		"1 week":          7 * d,
		"+3h":             3 * time.Hour,
	} {
		got, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
}

func TestParseDurationErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":            "empty duration",
		"   ":         "empty duration",
		"-1h":         "negative",
		"12":          "12 has no unit",
		"1h30":        "30 has no unit",
		"3 fortnight": `unknown unit "fortnight"`,
		"abc":         "expected a number",
		"1..2h":       "is not a number",
		"1:5":         "not a clock",
		"1:75:00":     "not a clock",
		"1:00:00 1d":  "not a clock",
		"999999999d":  "too long",
		"1 day,,":     "", // trailing separators are accepted
	} {
		_, err := ParseDuration(in)
		if want == "" {
			require.NoError(t, err, in)
			continue
		}
		require.ErrorContains(t, err, want, in)
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                       "0",
		64 * 24 * time.Hour:     "64d",
		36 * time.Hour:          "1d12h",
		90 * time.Minute:        "1h30m",
		time.Second:             "1s",
		1500 * time.Millisecond: "1.5s",
		-time.Hour:              "-1h0m0s",
	} {
		got := FormatDuration(d)
		require.Equal(t, want, got)
		if d >= 0 {
			back, err := ParseDuration(got)
			require.NoError(t, err)
			require.Equal(t, d, back)
		}
	}
}

func TestDurationFlagValue(t *testing.T) {
	t.Parallel()
	var d Duration
	require.NoError(t, d.Set("90 days"))
	require.Equal(t, "90d", d.String())
	require.Equal(t, "duration", d.Type())
	b, err := d.MarshalText()
	require.NoError(t, err)
	require.Equal(t, "90d", string(b))
	require.Error(t, d.Set("x"))
}
