// Room: the browser's output. tail has no lock of its own; Process.tailMu
// guards the one a Process holds.

package launch

import (
	"bytes"
	"strings"
)

// OutputTailSize is how many bytes of the browser's combined stdout and
// stderr a Process keeps.
const OutputTailSize = 8 << 10

// tail keeps the last max bytes written to it. Its zero value keeps nothing.
type tail struct {
	max       int
	b         []byte
	truncated bool
}

func (t *tail) write(p []byte) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		n := copy(t.b, t.b[over:])
		t.b = t.b[:n]
		t.truncated = true
	}
}

// String returns the kept bytes as text. When older output was dropped, the
// first (partial) line is dropped too.
func (t *tail) String() string {
	b := t.b
	if t.truncated {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
