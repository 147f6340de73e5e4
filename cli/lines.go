package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

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
