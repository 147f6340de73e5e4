package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxLineLength+1)
	exact := strings.Repeat("y", maxLineLength)
	in := "\xef\xbb\xbfa\r\n\nb\n" + long + "\n" + exact + "\nlast"
	lr := newLineReader(strings.NewReader(in))
	var got []string
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errLineTooLong) {
			got = append(got, "TOO LONG")
			continue
		}
		require.NoError(t, err)
		if bytes.Equal(line, []byte(exact)) {
			line = []byte("EXACT")
		}
		got = append(got, string(line))
	}
	require.Equal(t, []string{"a", "", "b", "TOO LONG", "EXACT", "last"}, got)
	require.Equal(t, 6, lr.n)
}
