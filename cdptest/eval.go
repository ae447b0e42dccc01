// Room: the tiny expression evaluator behind the built-in
// Runtime.evaluate. Pure functions; no state, no lock.

package cdptest

import (
	"math"
	"strconv"
	"strings"
)

// remoteObject is a Runtime.RemoteObject for a primitive.
type remoteObject struct {
	Type                string `json:"type"`
	Subtype             string `json:"subtype,omitempty"`
	Value               any    `json:"value,omitempty"`
	UnserializableValue string `json:"unserializableValue,omitempty"`
	Description         string `json:"description,omitempty"`
}

var undefined = remoteObject{Type: "undefined"}

// evaluate understands numbers and their arithmetic (+ - * / % and
// parentheses), string literals and their concatenation, document.title,
// document.URL, location.href and window.location.href. Anything else is
// not understood: ok is false.
func evaluate(expr, title, href string) (_ remoteObject, ok bool) {
	p := &parser{src: trimExpr(expr), title: title, href: href}
	if p.src == "" {
		return undefined, true
	}
	v, ok := p.expr()
	p.space()
	if !ok || p.pos != len(p.src) {
		return remoteObject{}, false
	}
	if v.isStr {
		return remoteObject{Type: "string", Value: v.str}, true
	}
	n := v.num
	switch {
	case math.IsNaN(n), math.IsInf(n, 0), n == 0 && math.Signbit(n):
		s := jsNumber(n)
		if n == 0 {
			s = "-0"
		}
		return remoteObject{Type: "number", UnserializableValue: s, Description: s}, true
	}
	return remoteObject{Type: "number", Value: n, Description: jsNumber(n)}, true
}

type value struct {
	num   float64
	str   string
	isStr bool
}

func (v value) String() string {
	if v.isStr {
		return v.str
	}
	return jsNumber(v.num)
}

// jsNumber formats n as JavaScript's Number.prototype.toString does for
// the common cases.
func jsNumber(n float64) string {
	switch {
	case math.IsNaN(n):
		return "NaN"
	case math.IsInf(n, 1):
		return "Infinity"
	case math.IsInf(n, -1):
		return "-Infinity"
	case n == 0:
		return "0"
	}
	if a := math.Abs(n); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(n, 'e', -1, 64) // 1e+21, 1e-7
		return strings.Replace(s, "e+0", "e+", 1)
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}

type parser struct {
	src         string
	pos         int
	title, href string
}

func (p *parser) space() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) expr() (value, bool) {
	l, ok := p.term()
	for ok {
		op := p.peek()
		if op != '+' && op != '-' {
			break
		}
		p.pos++
		var r value
		if r, ok = p.term(); !ok {
			break
		}
		switch {
		case op == '+' && (l.isStr || r.isStr):
			l = value{str: l.String() + r.String(), isStr: true}
		case l.isStr || r.isStr:
			ok = false
		case op == '+':
			l.num += r.num
		default:
			l.num -= r.num
		}
	}
	return l, ok
}

func (p *parser) term() (value, bool) {
	l, ok := p.unary()
	for ok {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			break
		}
		p.pos++
		var r value
		if r, ok = p.unary(); !ok {
			break
		}
		if l.isStr || r.isStr {
			return value{}, false
		}
		switch op {
		case '*':
			l.num *= r.num
		case '/':
			l.num /= r.num
		default:
			l.num = math.Mod(l.num, r.num)
		}
	}
	return l, ok
}

func (p *parser) unary() (value, bool) {
	switch op := p.peek(); op {
	case '+', '-':
		p.pos++
		v, ok := p.unary()
		if !ok || v.isStr {
			return value{}, false
		}
		if op == '-' {
			v.num = -v.num
		}
		return v, true
	}
	return p.primary()
}

func (p *parser) primary() (value, bool) {
	c := p.peek()
	switch {
	case c == '(':
		p.pos++
		v, ok := p.expr()
		if !ok || p.peek() != ')' {
			return value{}, false
		}
		p.pos++
		return v, true
	case c == '\'' || c == '"':
		return p.str(c)
	case c >= '0' && c <= '9' || c == '.':
		start := p.pos
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
			p.pos++
		}
		n, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		return value{num: n}, err == nil
	}
	start := p.pos
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	switch p.src[start:p.pos] {
	case "document.title":
		return value{str: p.title, isStr: true}, true
	case "location.href", "window.location.href", "document.location.href", "document.URL":
		return value{str: p.href, isStr: true}, true
	}
	return value{}, false
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// str reads a string literal quoted with q.
func (p *parser) str(q byte) (value, bool) {
	p.pos++
	var sb strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == q:
			return value{str: sb.String(), isStr: true}, true
		case c == '\\' && p.pos < len(p.src):
			e := p.src[p.pos]
			p.pos++
			switch e {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case 'r':
				sb.WriteByte('\r')
			default:
				sb.WriteByte(e)
			}
		default:
			sb.WriteByte(c)
		}
	}
	return value{}, false // unterminated
}
