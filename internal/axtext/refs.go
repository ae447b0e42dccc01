// Room: ref numbering. Refs has no lock of its own: its owner guards it
// (the tab's refTable.mu); Counter.mu guards the numbers several Refs
// share, taken inside the owner's lock.

package axtext

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Ref is one element a printed snapshot gave a ref.
type Ref struct {
	Ref  string // e.g. "@e3"
	Role string // e.g. "button"
	Name string // its accessible name, cut to NameLimit characters
}

// maxStableRefs bounds the stable ref numbers kept for one document.
const maxStableRefs = 100000

// truncatedLine ends a snapshot cut by its limit; truncatedInteractive
// ends an interactive-only one, which only a larger limit can grow.
const (
	truncatedLine        = "[truncated: %d more nodes (%d interactive) left out, without refs; use Interactive or a larger MaxChars]"
	truncatedInteractive = "[truncated: %d more nodes (%d interactive) left out, without refs; use a larger MaxChars (negative: no bound)]"
)

// maxSpans bounds the spans of ref numbers one tab remembers issuing from a
// shared Counter; the oldest are forgotten first.
const maxSpans = 1024

// Counter issues ref numbers shared by several Refs (the tabs of one
// browser session), so that no two of them ever show the same number: a
// ref taken from one tab's snapshot never names an element of another.
// The zero value is ready to use; it is safe for concurrent use.
type Counter struct {
	mu   sync.Mutex
	next int // guarded by mu; the last number issued
}

// span is a run of ref numbers a Refs issued from its Counter, lo to hi.
type span struct{ lo, hi int }

// Refs numbers the interactive elements of a tab's snapshots: the same
// element keeps its number across snapshots of one document, and a number
// is never reused for another element. The refs the latest Print showed
// are the live ones. The zero value is ready to use; it is not safe for
// concurrent use.
type Refs[T any] struct {
	// Shared, when set before the first Print, issues the numbers (and
	// next is unused): see Counter.
	Shared *Counter

	next   int             // the last ref number issued (never reused)
	spans  []span          // with Shared: the numbers this Refs issued, oldest first
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

// Issued reports whether ref number n was ever given out by this Refs
// (with a Shared counter: among its last maxSpans runs of numbers).
func (r *Refs[T]) Issued(n int) bool {
	if r.Shared == nil {
		return n <= r.next
	}
	for _, sp := range r.spans {
		if sp.lo <= n && n <= sp.hi {
			return true
		}
	}
	return false
}

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
// numbers of the same elements), prints up to limit characters (Unicode
// code points; no bound if limit is not positive; only the interactive
// lines, unindented, if interactiveOnly) and makes the printed refs the
// live ones. It returns the text, the refs, and the counts of lines shown
// and left out. A text that fits whole is printed whole. Otherwise lines
// are printed in order until the next one would leave no room for the
// last "[truncated: …]" line, which counts the rest; they get no ref.
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
	// Every line's text, numbered as it would be if printed: the printed
	// lines are always the first ones, so their numbers are these.
	type entry struct {
		l     *Line[T]
		text  string
		n     int
		known bool
	}
	entries := make([]entry, 0, len(lines))
	fresh := map[NodeKey]int{} // numbers given to elements first seen here
	last := &r.next            // the last number issued, guarded by the owner's lock or Shared.mu
	if c := r.Shared; c != nil {
		// Held for the whole Print: the numbers this Print issues are a
		// run of their own (recorded in spans), and formatting is all it
		// does meanwhile.
		c.mu.Lock()
		defer c.mu.Unlock()
		last = &c.next
	}
	base := *last
	next, total := base, 0
	for i := range lines {
		l := &lines[i]
		if interactiveOnly && !l.Interactive && !l.Note {
			continue // a note (the page shows nothing accessible) is kept
		}
		e := entry{l: l}
		if l.Interactive {
			if e.n, e.known = r.byNode[l.Key]; !e.known {
				if n, ok := fresh[l.Key]; ok {
					e.n = n
				} else {
					next++
					e.n, fresh[l.Key] = next, next
				}
			}
			e.text = l.Format(RefName(e.n), interactiveOnly)
		} else {
			e.text = l.Format("", interactiveOnly)
		}
		total += utf8.RuneCountInString(e.text) + 1
		entries = append(entries, e)
	}
	truncated := truncatedLine
	if interactiveOnly {
		truncated = truncatedInteractive
	}
	budget := limit
	if limit > 0 && total > limit {
		// Room for the truncation line, at its longest.
		budget = limit - utf8.RuneCountInString(fmt.Sprintf(truncated, len(lines), len(lines))) - 1
	}
	var (
		b       strings.Builder
		refs    []Ref
		used    int // characters in b
		shown   int
		omitted int
		omitInt int
	)
	for _, e := range entries {
		size := utf8.RuneCountInString(e.text) + 1
		if omitted > 0 || (limit > 0 && used+size > budget) {
			omitted++
			if e.l.Interactive {
				omitInt++
			}
			continue
		}
		if e.l.Interactive {
			if !e.known {
				*last = max(*last, e.n)
				r.byNode[e.l.Key] = e.n
			}
			r.live[e.n] = e.l.Target
			refs = append(refs, Ref{Ref: RefName(e.n), Role: e.l.Role, Name: e.l.Name})
		}
		b.WriteString(e.text)
		b.WriteByte('\n')
		used += size
		shown++
	}
	if r.Shared != nil && *last > base {
		r.noteSpan(base+1, *last)
	}
	if omitted > 0 {
		line := fmt.Sprintf(truncated, omitted, omitInt)
		if n := utf8.RuneCountInString(line); limit > 0 && used+n+1 > limit {
			line = string([]rune(line)[:max(0, min(n, limit-used-1))])
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), refs, shown, omitted
}

// noteSpan records that this Refs issued the numbers lo to hi, joined to
// the run before when they follow it.
func (r *Refs[T]) noteSpan(lo, hi int) {
	if k := len(r.spans); k > 0 && r.spans[k-1].hi+1 == lo {
		r.spans[k-1].hi = hi
		return
	}
	if len(r.spans) >= maxSpans {
		r.spans = append(r.spans[:0], r.spans[1:]...)
	}
	r.spans = append(r.spans, span{lo, hi})
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
