package sqlite

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestObjectCol(t *testing.T) {
	for _, c := range []struct {
		name string
		src  any
		want map[string]any
		bad  bool
	}{
		{name: "NULL", src: nil, want: map[string]any{}},
		{name: "empty object", src: "{}", want: map[string]any{}},
		{name: "empty object bytes", src: []byte("{}"), want: map[string]any{}},
		{name: "JSON null", src: "null", want: map[string]any{}},
		{name: "object", src: `{"branch": "main", "opts": {"depth": 2}}`,
			want: map[string]any{"branch": "main", "opts": map[string]any{"depth": 2.0}}},
		{name: "object bytes", src: []byte(`{"a": [1, null]}`), want: map[string]any{"a": []any{1.0, nil}}},
		{name: "array", src: "[1]", bad: true},
		{name: "integer column", src: int64(3), bad: true},
	} {
		m := map[string]any{"left": "over"}
		err := objectCol{&m}.Scan(c.src)
		if c.bad {
			require.Error(t, err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, m, c.name)
	}
}
