// Room: ref numbering. Refs has no lock of its own: its owner guards it
// (the tab's refTable.mu).

package axtext

import (
	"fmt"
	"strconv"
	"strings"
)

// Ref is one element a printed snapshot gave a ref.
type Ref struct {
	Ref  string // e.g. "@e3"
	Role string // e.g. "button"
	Name string // its accessible name, cut to NameLimit characters
}

// maxStableRefs bounds the stable ref numbers kept for one document.
const maxStableRefs = 100000

// truncatedLine ends a snapshot cut by its limit.
const truncatedLine = "[truncated: %d more nodes (%d interactive) left out, without refs; use Interactive or a larger MaxChars]"

// Refs numbers the interactive elements of a tab's snapshots: the same
// element keeps its number across snapshots of one document, and a number
// is never reused for another element. The refs the latest Print showed
// are the live ones. The zero value is ready to use; it is not safe for
// concurrent use.
type Refs[T any] struct {
	next   int             // the last ref number issued (never reused)
	doc    string          // the document (main-frame loader id) the numbers belong to
	byNode map[NodeKey]int // stable numbers of this document's elements
	live   map[int]T       // refs the latest Print showed
}

// Doc returns the document the numbers belong to ("" after Invalidate).
func (r *Refs[T]) Doc() string { return r.doc }

// Lookup returns what live ref number n points at.
func (r *Refs[T]) Lookup(n int) (T, bool) {
	t, ok := r.live[n]
	return t, ok
}

// Issued reports whether ref number n was ever given out.
func (r *Refs[T]) Issued(n int) bool { return n <= r.next }

// Name returns the live ref of the node key, or "".
func (r *Refs[T]) Name(key NodeKey) string {
	n, ok := r.byNode[key]
	if !ok {
		return ""
	}
	if _, live := r.live[n]; !live {
		return ""
	}
	return RefName(n)
}

// Invalidate forgets the document: no ref is live and no number is kept.
func (r *Refs[T]) Invalidate() {
	clear(r.live)
	clear(r.byNode)
	r.doc = ""
}

// DropLive makes no ref live, keeping the numbers.
func (r *Refs[T]) DropLive() { clear(r.live) }

// Print numbers the interactive lines of document doc (keeping earlier
// numbers of the same elements), prints up to limit characters (no bound
// if limit is not positive; only the interactive lines, unindented, if
// interactiveOnly) and makes the printed refs the live ones. It returns
// the text, the refs, and the counts of lines shown and left out. Lines
// are printed in order until the next one would pass the limit; the rest
// are counted in a last "[truncated: …]" line and get no ref.
func (r *Refs[T]) Print(doc string, lines []Line[T], interactiveOnly bool, limit int) (string, []Ref, int, int) {
	if r.byNode == nil {
		r.byNode = make(map[NodeKey]int)
		r.live = make(map[int]T)
	}
	if doc != r.doc || len(r.byNode) > maxStableRefs {
		clear(r.byNode)
		r.doc = doc
	}
	clear(r.live)
	var (
		b       strings.Builder
		refs    []Ref
		shown   int
		omitted int
		omitInt int
	)
	budget := limit
	if limit > 0 {
		// Room for the truncation line, at its longest.
		budget = limit - len(fmt.Sprintf(truncatedLine, len(lines), len(lines))) - 1
	}
	for i := range lines {
		l := &lines[i]
		if interactiveOnly && !l.Interactive {
			continue
		}
		if omitted > 0 {
			omitted++
			if l.Interactive {
				omitInt++
			}
			continue
		}
		ref, n, known := "", 0, false
		if l.Interactive {
			if n, known = r.byNode[l.Key]; !known {
				n = r.next + 1
			}
			ref = RefName(n)
		}
		s := l.Format(ref, interactiveOnly)
		if limit > 0 && b.Len()+len(s)+1 > budget {
			omitted = 1
			if l.Interactive {
				omitInt = 1
			}
			continue
		}
		if l.Interactive {
			if !known {
				r.next = n
				r.byNode[l.Key] = n
			}
			r.live[n] = l.Target
			refs = append(refs, Ref{Ref: ref, Role: l.Role, Name: l.Name})
		}
		b.WriteString(s)
		b.WriteByte('\n')
		shown++
	}
	if omitted > 0 {
		line := fmt.Sprintf(truncatedLine, omitted, omitInt)
		if limit > 0 && b.Len()+len(line)+1 > limit {
			line = string([]rune(line)[:max(0, min(len([]rune(line)), limit-b.Len()-1))])
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), refs, shown, omitted
}

// RefName is the text of ref number n: "@e" and the number.
func RefName(n int) string { return "@e" + strconv.Itoa(n) }

// ParseRef accepts "@e12" and "e12" (surrounding space ignored) and
// returns the number.
func ParseRef(ref string) (int, bool) {
	s := strings.TrimPrefix(strings.TrimSpace(ref), "@")
	if !strings.HasPrefix(s, "e") {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n <= 0 || s[1] == '+' {
		return 0, false
	}
	return n, true
}
