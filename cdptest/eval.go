// Room: the tiny expression evaluator behind the built-in
// Runtime.evaluate. Pure functions; no state, no lock.

package cdptest

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// remoteObject is a Runtime.RemoteObject of a value returned by value.
type remoteObject struct {
	Type                string `json:"type"`
	Subtype             string `json:"subtype,omitempty"`
	ClassName           string `json:"className,omitempty"`
	Value               any    `json:"value,omitempty"`
	UnserializableValue string `json:"unserializableValue,omitempty"`
	Description         string `json:"description,omitempty"`
}

var undefined = remoteObject{Type: "undefined"}

// evaluate understands literals (numbers, strings with every escape of
// JavaScript, true, false, null, undefined, NaN, Infinity and arrays of
// them), number arithmetic (+ - * / % ** and parentheses), string
// concatenation, .length, document.title, document.URL, location.href and
// window.location.href. Anything else, and any mix of types whose
// JavaScript coercion it does not model, is not understood: ok is false,
// never a wrong value.
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
	return v.remote(), true
}

// kind is a value's JavaScript type, as far as the evaluator knows them.
type kind int

const (
	kNum kind = iota
	kStr
	kBool
	kNull
	kUndef
	kArray
)

type value struct {
	kind kind
	num  float64
	str  string
	b    bool
	arr  []value
}

func num(n float64) value  { return value{kind: kNum, num: n} }
func str(s string) value   { return value{kind: kStr, str: s} }
func boolean(b bool) value { return value{kind: kBool, b: b} }

// String is JavaScript's String(v) for a primitive.
func (v value) String() string {
	switch v.kind {
	case kStr:
		return v.str
	case kBool:
		return strconv.FormatBool(v.b)
	case kNull:
		return "null"
	case kUndef:
		return "undefined"
	}
	return jsNumber(v.num)
}

// json is v as JSON.stringify gives it inside an array.
func (v value) json() any {
	switch v.kind {
	case kStr:
		return v.str
	case kBool:
		return v.b
	case kNum:
		if math.IsNaN(v.num) || math.IsInf(v.num, 0) {
			return nil
		}
		return v.num
	case kArray:
		out := make([]any, len(v.arr))
		for i, x := range v.arr {
			out[i] = x.json()
		}
		return out
	}
	return nil // null, and undefined in an array
}

// remote is v's RemoteObject, returned by value as Chromium does.
func (v value) remote() remoteObject {
	switch v.kind {
	case kStr:
		return remoteObject{Type: "string", Value: v.str}
	case kBool:
		return remoteObject{Type: "boolean", Value: v.b}
	case kNull:
		return remoteObject{Type: "object", Subtype: "null", Value: json.RawMessage("null")}
	case kUndef:
		return undefined
	case kArray:
		return remoteObject{Type: "object", Subtype: "array", ClassName: "Array",
			Description: "Array(" + strconv.Itoa(len(v.arr)) + ")", Value: v.json()}
	}
	n := v.num
	if math.IsNaN(n) || math.IsInf(n, 0) || n == 0 && math.Signbit(n) {
		s := jsNumber(n)
		if n == 0 {
			s = "-0"
		}
		return remoteObject{Type: "number", UnserializableValue: s, Description: s}
	}
	return remoteObject{Type: "number", Value: n, Description: jsNumber(n)}
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
		s := strconv.FormatFloat(n, 'e', -1, 64)  // 1e+21, 1e-07
		return strings.Replace(s, "e-0", "e-", 1) // JavaScript's 1e-7
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
		case l.kind == kArray || r.kind == kArray:
			ok = false
		case op == '+' && (l.kind == kStr || r.kind == kStr):
			l = str(l.String() + r.String())
		case l.kind != kNum || r.kind != kNum:
			ok = false // JavaScript's coercions of the rest are not modelled
		case op == '+':
			l.num += r.num
		default:
			l.num -= r.num
		}
	}
	return l, ok
}

func (p *parser) term() (value, bool) {
	l, ok := p.power()
	for ok {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' || strings.HasPrefix(p.src[p.pos:], "**") {
			break
		}
		p.pos++
		var r value
		if r, ok = p.power(); !ok {
			break
		}
		if l.kind != kNum || r.kind != kNum {
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

// power is ** (right-associative; JavaScript refuses a unary operand on
// its left, so this does too).
func (p *parser) power() (value, bool) {
	unary := p.peek() == '-' || p.peek() == '+'
	l, ok := p.unary()
	if !ok || p.peek() != '*' || !strings.HasPrefix(p.src[p.pos:], "**") {
		return l, ok
	}
	p.pos += 2
	r, ok := p.power()
	if !ok || unary || l.kind != kNum || r.kind != kNum {
		return value{}, false
	}
	return num(math.Pow(l.num, r.num)), true
}

func (p *parser) unary() (value, bool) {
	switch op := p.peek(); op {
	case '+', '-':
		p.pos++
		v, ok := p.unary()
		if !ok || v.kind != kNum {
			return value{}, false
		}
		if op == '-' {
			v.num = -v.num
		}
		return v, true
	}
	return p.postfix()
}

// postfix is a primary followed by .length.
func (p *parser) postfix() (value, bool) {
	v, ok := p.primary()
	for ok && p.peek() == '.' && strings.HasPrefix(p.src[p.pos:], ".length") &&
		(p.pos+7 == len(p.src) || !isIdent(p.src[p.pos+7])) {
		p.pos += 7
		v, ok = length(v)
	}
	return v, ok
}

// length is v.length for a string (in UTF-16 units) or an array.
func length(v value) (value, bool) {
	switch v.kind {
	case kStr:
		n := 0
		for _, r := range v.str {
			n += utf16.RuneLen(r)
		}
		return num(float64(n)), true
	case kArray:
		return num(float64(len(v.arr))), true
	}
	return value{}, false
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
	case c == '[':
		return p.array()
	case c == '\'' || c == '"':
		return p.str(c)
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	}
	start := p.pos
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	name := p.src[start:p.pos]
	path, isLength := strings.CutSuffix(name, ".length")
	var v value
	switch path {
	case "document.title":
		v = str(p.title)
	case "location.href", "window.location.href", "document.location.href", "document.URL":
		v = str(p.href)
	case "true", "false":
		v = boolean(path == "true")
	case "null":
		v = value{kind: kNull}
	case "undefined":
		v = value{kind: kUndef}
	case "NaN":
		v = num(math.NaN())
	case "Infinity":
		v = num(math.Inf(1))
	default:
		return value{}, false
	}
	if isLength {
		return length(v)
	}
	return v, true
}

// number reads a decimal number literal, with an exponent if any, or a
// legacy octal one as sloppy-mode JavaScript (Runtime.evaluate) reads it:
// "010" is 8, while "08" and "09.5", having a digit octal lacks, are
// decimal.
func (p *parser) number() (value, bool) {
	start := p.pos
	digits := func() {
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
			p.pos++
		}
	}
	digits()
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		digits()
	}
	if p.pos < len(p.src) && isIdent(p.src[p.pos]) {
		return value{}, false // 0x10, 1n, 1_000: not modelled
	}
	lit := p.src[start:p.pos]
	if len(lit) > 1 && lit[0] == '0' && lit[1] >= '0' && lit[1] <= '9' && !strings.ContainsAny(lit, "89") {
		o, err := strconv.ParseUint(lit[1:], 8, 64)
		if err != nil {
			return value{}, false // 010.5, 01e2: a SyntaxError in JavaScript
		}
		return num(float64(o)), true
	}
	n, err := strconv.ParseFloat(lit, 64)
	return num(n), err == nil
}

// array reads an array literal of values.
func (p *parser) array() (value, bool) {
	p.pos++ // [
	v := value{kind: kArray, arr: []value{}}
	if p.peek() == ']' {
		p.pos++
		return v, true
	}
	for {
		x, ok := p.expr()
		if !ok {
			return value{}, false
		}
		v.arr = append(v.arr, x)
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, true
		default:
			return value{}, false
		}
	}
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// str reads a string literal quoted with q, decoding JavaScript's escapes
// (\n, \t, \xHH, \uHHHH, \u{H…}, a surrogate pair, a line continuation
// …). A malformed escape, or a legacy octal one, is not understood.
func (p *parser) str(q byte) (value, bool) {
	p.pos++
	var units []uint16 // UTF-16, as JavaScript strings are
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return str(string(utf16.Decode(units))), true
		case c == '\n' || c == '\r':
			return value{}, false // unterminated
		case c != '\\':
			r, n := utf8.DecodeRuneInString(p.src[p.pos:])
			p.pos += n
			units = utf16.AppendRune(units, r)
			continue
		}
		p.pos++ // the backslash
		if p.pos >= len(p.src) {
			break
		}
		e := p.src[p.pos]
		p.pos++
		if u, ok := charEscapes[e]; ok {
			units = append(units, u)
			continue
		}
		switch e {
		case '0':
			if p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
				return value{}, false // legacy octal
			}
			units = append(units, 0)
		case '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return value{}, false // legacy octal, or \8 \9
		case 'x':
			u, ok := p.hex(2)
			if !ok {
				return value{}, false
			}
			units = append(units, uint16(u))
		case 'u':
			if p.pos < len(p.src) && p.src[p.pos] == '{' {
				end := strings.IndexByte(p.src[p.pos:], '}')
				if end < 2 {
					return value{}, false
				}
				r, err := strconv.ParseUint(p.src[p.pos+1:p.pos+end], 16, 32)
				if err != nil || r > utf8.MaxRune {
					return value{}, false
				}
				p.pos += end + 1
				units = utf16.AppendRune(units, rune(r))
				break
			}
			u, ok := p.hex(4)
			if !ok {
				return value{}, false
			}
			units = append(units, uint16(u))
		case '\r':
			if p.pos < len(p.src) && p.src[p.pos] == '\n' {
				p.pos++
			}
		case '\n':
			// a line continuation: nothing
		default:
			// Any other escaped character is itself (\' \" \\ \q).
			p.pos--
			r, n := utf8.DecodeRuneInString(p.src[p.pos:])
			p.pos += n
			units = utf16.AppendRune(units, r)
		}
	}
	return value{}, false // unterminated
}

// charEscapes are the one-character escapes of a string literal: \n is a
// newline.
var charEscapes = map[byte]uint16{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', 'v': '\v'}

// hex reads n hex digits.
func (p *parser) hex(n int) (uint64, bool) {
	if p.pos+n > len(p.src) {
		return 0, false
	}
	u, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32) // no sign: ParseUint refuses one
	if err != nil {
		return 0, false
	}
	p.pos += n
	return u, true
}
