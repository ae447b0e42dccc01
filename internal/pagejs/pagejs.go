// Package pagejs holds every JavaScript source the tab's actions send to a
// page (Runtime.callFunctionOn functions and Runtime.evaluate
// expressions), as named constants, so that a fake browser (cdptest) can
// recognise the library's page calls by identity rather than by their text.
// It holds no state and starts no goroutine.
//
// Room: page JavaScript. No locks: constants only.
package pagejs

// ReadyState is the expression WaitLoad evaluates: the document's
// readyState.
const ReadyState = "document.readyState"

// ClickDisarm removes the listeners of a click watch (this) made by
// ClickArm, when a click failed before ClickReport could.
const ClickDisarm = "function() { this.stop(); }"

// Describe describes an element for an error message: its tag, id, up
// to three classes and the start of its text, as in div#banner.cookie
// "We use cookies", and whether it is fixed or sticky (a fixed overlay
// over most of the page: a modal's backdrop).
const Describe = `(n => {
	const c = n && (n.nodeType === 1 ? n : n.parentElement);
	if (!c) return '';
	let d = c.tagName.toLowerCase();
	if (c.id) d += '#' + c.id;
	if (typeof c.className === 'string' && c.className.trim()) d += '.' + c.className.trim().split(/\s+/).slice(0, 3).join('.');
	let text = (c.getAttribute('aria-label') || c.innerText || c.value || '').trim().replace(/\s+/g, ' ');
	if (text.length > 60) text = text.slice(0, 59) + '…';
	if (text) d += ' "' + text + '"';
	const pos = getComputedStyle(c).position;
	if (pos === 'fixed' || pos === 'sticky') {
		const r = c.getBoundingClientRect();
		d += r.width * r.height >= innerWidth * innerHeight / 2 ? ' (a ' + pos + ' overlay over most of the page)' : ' (' + pos + ')';
	}
	return d;
})`

// Cover decides whether the node hit at the click point (h) is the
// element (this) for a click's purpose, and else describes it and says
// whether the element lets the pointer through (pointer-events: none).
const Cover = `function(h) {
	for (let n = h; n; n = n.assignedSlot || n.parentNode || n.host) if (n === this) return {ok: true}; // the composed tree: a slotted node is inside its slot
	// Text slotted into this from a shadow host's light DOM is hit as the
	// host: this's slots show it.
	for (let r = this.getRootNode(); r && r.host; r = r.host.getRootNode()) {
		if (r.host !== h) continue;
		for (const s of this.querySelectorAll('slot')) if (s.assignedNodes().some(a => a.parentNode === h)) return {ok: true};
	}
	for (let p = h; p; p = p.parentElement) if (p.tagName === 'LABEL' && p.control === this) return {ok: true};
	const visible = this.checkVisibility ? this.checkVisibility({visibilityProperty: true}) : true;
	const inert = getComputedStyle(this).pointerEvents === 'none';
	return {ok: false, visible, inert, cover: (` + Describe + `)(h)};
}`

// LabelOf returns the first label on screen of a checkbox, radio or file
// input (this), for a click the page's own drawing keeps off the control
// (an sr-only, zero-size, clipped or pointer-events:none checkbox under a
// styled label), or null (another element, or no such label).
const LabelOf = `function() {
	if (this.tagName !== 'INPUT' || !['checkbox', 'radio', 'file'].includes(this.type)) return null;
	for (const l of this.labels || []) if (l.getClientRects().length > 0 && (!l.checkVisibility || l.checkVisibility({visibilityProperty: true}))) return l;
	return null;
}`

// ScrollCenter scrolls an element (this) to the middle of its viewport,
// at once: out from under a sticky header or a fixed bar.
const ScrollCenter = "function() { this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'}); }"

// ClickArm arms a click watch on an element (this) for the length of one
// click: listeners in the capture phase on its window, which see the
// presses, releases and clicks of its document before any element's
// handler can stop them, and on the element itself, which also see events
// inside its shadow trees. A page that stops these events on its window
// first leaves the click unconfirmed. It returns the watch object, or, when the element
// cannot take a click at all, a string saying why ("disabled").
const ClickArm = `function() {
	const el = this, win = el.ownerDocument.defaultView;
	if (el.matches(':disabled')) return 'disabled';
	// A document that runs no scripts (a sandboxed frame without
	// allow-scripts), or a page whose addEventListener does nothing, calls
	// no listener: the click cannot be watched.
	let live = false;
	const probe = () => { live = true; };
	el.addEventListener('browserpool-probe', probe);
	el.dispatchEvent(new Event('browserpool-probe'));
	el.removeEventListener('browserpool-probe', probe);
	if (!live) return 'unwatched';
	const w = {el, log: [], hit: new WeakSet()};
	const types = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click'];
	const onWin = e => {
		if (w.log.length >= 32) return;
		let label = false, link = null;
		for (const n of e.composedPath()) {
			if (n.tagName === 'LABEL' && n.control === el) label = true;
			if (!link && (n.tagName === 'A' || n.tagName === 'AREA') && n.hasAttribute('href')) link = n;
		}
		w.log.push({e, type: e.type, label, target: e.target, link});
	};
	const onEl = e => { w.hit.add(e); };
	for (const t of types) {
		win.addEventListener(t, onWin, true);
		el.addEventListener(t, onEl, true);
	}
	w.stop = () => {
		for (const t of types) {
			win.removeEventListener(t, onWin, true);
			el.removeEventListener(t, onEl, true);
		}
	};
	return w;
}`

// ClickReport reads a click watch (this) into a clickReport, and
// disarms it if stop is set. Only the nodes that got a press or a release
// instead of the element are described, and only here: describing reads
// innerText, which would lay the page out in the middle of the click.
const ClickReport = `function(stop) {
	const w = this, el = w.el;
	if (stop) w.stop();
	const describe = ` + Describe + `;
	const reached = r => r.label || w.hit.has(r.e);
	const press = r => r.type === 'pointerdown' || r.type === 'mousedown';
	const release = r => r.type === 'pointerup' || r.type === 'mouseup';
	const missed = is => { const r = w.log.find(r => is(r) && !reached(r)); return r ? describe(r.target) || 'a node without a description' : ''; };
	const shown = el.isConnected && el.getClientRects().length > 0 && (!el.checkVisibility || el.checkVisibility({visibilityProperty: true}));
	// A click on a javascript: link runs the link's script a moment after
	// the click (about 10 ms in Chromium 156): say so, unless the click's
	// default was prevented or the script does nothing (void(0), ;).
	const clicked = w.log.find(r => r.type === 'click' && reached(r));
	const href = clicked && clicked.link && !clicked.e.defaultPrevented ? clicked.link.getAttribute('href').trim() : '';
	const scriptLink = ` + scriptHref + `(href);
	return {
		scriptLink,
		pressed: w.log.some(r => press(r) && reached(r)),
		clicked: w.log.some(r => r.type === 'click' && reached(r)),
		pressOn: missed(press),
		releaseOn: missed(release),
		connected: el.isConnected,
		shown,
		disabled: el.matches(':disabled'),
	};
}`

// Fill focuses an editable element and selects its content, and says
// what kind of element it is (kind "value": a slider or a colour well,
// which takes a value but no typing), its input type, whether its
// content is a secret, and, for an element that is no field ("other"),
// whether it holds one (field: an ARIA combobox around its text box), and
// a text field's maxlength (maxLength, -1 for none).
const Fill = `function() {
	const el = this, tag = el.tagName, type = (el.type || '').toLowerCase();
	const ac = (el.getAttribute && el.getAttribute('autocomplete')) || '';
	const secret = type === 'password' || /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc)(\s|$)/.test(ac);
	let kind = 'other';
	if (tag === 'TEXTAREA') kind = 'text';
	else if (tag === 'INPUT') kind = ['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'hidden'].includes(type) ? type : type === 'range' || type === 'color' ? 'value' : 'text';
	else if (el.isContentEditable) kind = 'editable';
	else if (tag === 'SELECT') kind = 'select';
	if (kind === 'other') return {kind, secret, type, field: !!(el.querySelector && el.querySelector('input:not([type=hidden]), textarea, [contenteditable]:not([contenteditable=false])'))};
	if (kind !== 'text' && kind !== 'editable' && kind !== 'value') return {kind, secret, type};
	if (el.disabled) return {kind: 'disabled', secret, type};
	if (el.readOnly) return {kind: 'readonly', secret, type};
	// The browser cuts what goes past the maxlength of a text field: said
	// before anything is typed.
	const maxLength = kind === 'text' && (tag === 'TEXTAREA' || ['text', 'search', 'url', 'tel', 'email', 'password'].includes(type)) && el.maxLength >= 0 ? el.maxLength : -1;
	el.__browserpoolBefore = 'value' in el ? el.value : el.innerText;
	el.focus();
	if (kind === 'text') {
		try { el.select(); } catch (e) {}
		try { el.setSelectionRange(0, el.value.length); } catch (e) {}
	} else if (kind === 'editable') {
		const r = document.createRange();
		r.selectNodeContents(el);
		const s = getSelection();
		s.removeAllRanges();
		s.addRange(r);
	}
	return {kind, secret, type, maxLength};
}`

// ScrollBox finds the scroll container of an element (this): itself or
// its nearest ancestor (across shadow roots) that scrolls, and returns the
// centre of its part in the viewport ({x, y}, CSS pixels), scrolling it
// into view first if less of it than 4 pixels shows; null when only the
// document scrolls it.
const ScrollBox = `function() {
	const scrolls = e => {
		const s = getComputedStyle(e), o = /(auto|scroll|overlay)/;
		return o.test(s.overflowY) && e.scrollHeight > e.clientHeight || o.test(s.overflowX) && e.scrollWidth > e.clientWidth;
	};
	let c = this;
	while (c && c !== document.documentElement && c !== document.body && !scrolls(c)) c = c.parentElement || (c.getRootNode().host || null);
	if (!c || c === document.documentElement || c === document.body) return null;
	const shown = () => {
		const r = c.getBoundingClientRect();
		return {x0: Math.max(r.left, 0), y0: Math.max(r.top, 0), x1: Math.min(r.right, innerWidth), y1: Math.min(r.bottom, innerHeight)};
	};
	let v = shown();
	if (v.x1 - v.x0 < 4 || v.y1 - v.y0 < 4) { c.scrollIntoView({block: 'nearest', inline: 'nearest'}); v = shown(); }
	return {x: (v.x0 + v.x1) / 2, y: (v.y0 + v.y1) / 2};
}`

// NumberFits asks the browser whether a number field (this) would take v
// as a valid value, by its min, max and step (the step's base its min or
// its value attribute), on a detached copy: {why: "" | "under" | "over" |
// "step", min, max, step}.
const NumberFits = `function(v) {
	const el = this, p = document.createElement('input');
	p.type = 'number';
	for (const a of ['min', 'max', 'step', 'value']) { const x = el.getAttribute(a); if (x !== null) p.setAttribute(a, x); }
	p.value = v;
	const s = p.validity;
	return {why: s.rangeUnderflow ? 'under' : s.rangeOverflow ? 'over' : s.stepMismatch ? 'step' : '', min: el.min, max: el.max, step: el.step};
}`

// FillDone finishes a fill of v after typing, and fires change, which the
// browser fires itself only when the field loses focus or takes Enter. If
// typing left the value as it was before (a date or number field, a
// framework that swallowed the insertion), it sets v through the
// prototype's setter, which frameworks' value trackers do not see, and
// fires the input event typing would have, unless the field's maxlength
// refuses v as typing does; a text field that typing left unchanged had
// the insertion cancelled by the page (why "refused"), and is left so. If
// typing changed the value to something else than v, the page formatted
// or filtered what was typed (a phone mask, an uppercasing or digits-only
// field): that is the page's answer, kept. It reports {ok, why, value}:
// whether the field holds v or the page's form of it, why not ("refused",
// "cut" by maxlength or the input type, or "format": a value its input
// type refuses whole, left as it was, with no event), and what it holds.
// An editable element's text is its value: typing that left it unchanged
// was refused.
const FillDone = `function(v) {
	const el = this;
	const before = el.__browserpoolBefore;
	delete el.__browserpoolBefore;
	const limit = typeof el.maxLength === 'number' ? el.maxLength : -1;
	const fits = limit < 0 || v.length <= limit;
	const texty = el.tagName === 'TEXTAREA' || ['', 'text', 'search', 'tel', 'url', 'email', 'password'].includes((el.type || '').toLowerCase());
	let why = '';
	if ('value' in el && el.value !== v && el.value === before && fits) {
		if (texty && v !== '') {
			why = 'refused'; // a text field takes typing unless the page cancels it
		} else {
			const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
			const set = Object.getOwnPropertyDescriptor(proto, 'value').set;
			set.call(el, v);
			if (v !== '' && (el.value === '' || (el.type === 'color' && el.value !== v.toLowerCase()))) {
				set.call(el, before); // the input type refused v (a date not in ISO form): keep what it held
				return {ok: false, why: 'format', value: el.value};
			}
			el.dispatchEvent(new Event('input', {bubbles: true}));
		}
	}
	el.dispatchEvent(new Event('change', {bubbles: true}));
	if (!('value' in el)) {
		// An editable element: its text is its value, as it reads
		// (innerText), compared with spaces folded: the element keeps a
		// run of spaces or a trailing one as no-break spaces.
		const fold = s => (s || '').replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim();
		const now = (el.innerText || '').replace(/\n$/, '');
		if (fold(now) === fold(v)) return {ok: true, value: v};
		if (v !== '' && fold(now) === fold(before)) return {ok: false, why: 'refused', value: now};
		return {ok: true, value: now};
	}
	if (why === '' && el.value !== v && !(fits && el.value !== before)) why = 'cut';
	return {ok: why === '', why, value: el.value};
}`

// Disabled reports whether the element (this) is disabled: its own
// attribute, a disabled fieldset's, a disabled optgroup's.
const Disabled = `function() { return this.matches(':disabled'); }`

// Shown reports whether the element is in a document a frame still shows:
// connected, and its document has a window (a frame that navigated leaves
// its old document without one).
const Shown = `function() { return this.isConnected && this.ownerDocument.defaultView !== null; }`

// Select chooses the options matching vals (by value, else by label): an
// option a user cannot choose (disabled, or in a disabled optgroup) is
// refused; choosing what is chosen already fires no events, as in a
// browser. A missing option comes with the first 30 options' labels,
// their count, and the labels that match it but for case or that hold it
// (or that it holds), at most 5. An element no longer in its document
// (removed since the snapshot) is err "gone": nothing is chosen.
const Select = `function(vals) {
	const el = this;
	if (!el.isConnected) return {err: 'gone'};
	if (el.tagName !== 'SELECT') return {err: 'not-select'};
	if (el.disabled) return {err: 'disabled'};
	const opts = Array.from(el.options), pick = [];
	const norm = s => s.replace(/\s+/g, ' ').trim();
	for (const v of vals) {
		const o = opts.find(o => o.value === v) || opts.find(o => norm(o.label) === norm(v)) || opts.find(o => norm(o.textContent) === norm(v));
		if (!o) {
			const labels = opts.map(o => norm(o.label) || o.value), low = norm(v).toLowerCase();
			const near = low === '' ? [] : labels.filter(l => { const k = l.toLowerCase(); return k !== '' && (k === low || k.includes(low) || low.includes(k)); }).slice(0, 5);
			return {err: 'missing', missing: v, options: labels.slice(0, 30), count: labels.length, near};
		}
		if (o.matches(':disabled')) return {err: 'option-disabled', missing: v};
		pick.push(o);
	}
	if (!el.multiple && pick.length !== 1) return {err: 'single'};
	el.focus();
	const before = opts.map(o => o.selected);
	for (const o of opts) o.selected = pick.includes(o);
	if (opts.some((o, i) => o.selected !== before[i])) {
		el.dispatchEvent(new Event('input', {bubbles: true}));
		el.dispatchEvent(new Event('change', {bubbles: true}));
	}
	return {selected: Array.from(el.selectedOptions).map(o => o.value)};
}`

// ClickDefault says what a click on an element (this) does by default
// besides its handlers: "submits its form", "resets its form", "follows
// its link to URL", or "" for nothing (a plain button, a label, a div).
const ClickDefault = `function() {
	const el = this, tag = el.tagName, type = (el.getAttribute('type') || '').toLowerCase();
	const submits = tag === 'BUTTON' ? !['button', 'menu', 'reset'].includes(type) : tag === 'INPUT' && (type === 'submit' || type === 'image');
	if (submits && el.form) return 'submits its form';
	if ((tag === 'BUTTON' || tag === 'INPUT') && type === 'reset' && el.form) return 'resets its form';
	const a = el.closest && el.closest('a[href]');
	const href = a ? a.getAttribute('href').trim() : '';
	if (a && href !== '' && !href.startsWith('#') && !/^javascript:/i.test(href)) return 'follows its link to ' + a.href;
	return '';
}`

// scriptHref is a function telling whether a link's href (trimmed) is a
// javascript: URL whose script does something (not void(0), not ";").
const scriptHref = `(href => /^javascript:/i.test(href) && !/^javascript:\s*(void\s*\(?\s*0\s*\)?)?\s*;?\s*$/i.test(href))`

// ScriptLinkFocus tells whether the focused element (through open shadow
// roots) is in a link whose href is a javascript: URL that does something:
// an Enter on it runs the script a moment later, as a click does.
const ScriptLinkFocus = `(() => {
	let a = document.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	const link = a && a.closest ? a.closest('a[href]') : null;
	return !!link && ` + scriptHref + `(link.getAttribute('href').trim());
})()`

// SecretFocus says whether the focused element holds a secret (or is an
// iframe, whose focused element cannot be seen from here).
const SecretFocus = `(() => {
	let a = document.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	if (!a) return false;
	if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') return true;
	const ac = (a.getAttribute && a.getAttribute('autocomplete')) || '';
	return (a.type || '').toLowerCase() === 'password' || /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc)(\s|$)/.test(ac);
})()`

// TypeWatchArm starts counting the key presses (keydown) that reach the
// element with the keyboard focus (through open shadow roots), for Type to
// tell whether its keys went where they were meant to. It returns
// {state, secret, type}: state "ok", "none" when nothing has the focus
// (the page's body), "frame" when an iframe has it (whose document may be
// another site's: not watched), or "value" when an input that takes no
// typed text has it (a date or time field, which takes keys part by part,
// a slider or a colour well; type is its input type; not watched);
// secret is SecretFocus's answer, read in the same call.
const TypeWatchArm = `(() => {
	const k = Symbol.for('browserpool.type'), secret = ` + SecretFocus + `;
	if (window[k]) window[k].stop();
	let a = document.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	if (!a || a === document.body || a === document.documentElement) return {state: 'none', secret};
	if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') return {state: 'frame', secret};
	const type = a.tagName === 'INPUT' ? (a.type || '').toLowerCase() : '';
	if (['date', 'time', 'datetime-local', 'month', 'week', 'range', 'color'].includes(type)) return {state: 'value', secret, type};
	const w = {keys: 0};
	const on = e => { if (e.composedPath().includes(a)) w.keys++; };
	window.addEventListener('keydown', on, true);
	w.stop = () => { window.removeEventListener('keydown', on, true); delete window[k]; };
	window[k] = w;
	return {state: 'ok', secret};
})()`

// TypeWatchRead ends TypeWatchArm's count: {keys, now}, now naming what
// has the focus ("input#q", "body"); null when there is no watch (the
// page navigated).
const TypeWatchRead = `(() => {
	const w = window[Symbol.for('browserpool.type')];
	if (!w) return null;
	w.stop();
	let a = document.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	const now = !a ? 'nothing' : a.tagName.toLowerCase() + (a.id ? '#' + a.id : '') + (a.getAttribute('name') ? '[name=' + a.getAttribute('name') + ']' : '');
	return {keys: w.keys, now};
})()`

// Poll returns a promise that resolves to {ok: true, value} once check()
// returns a truthy value (awaited if a promise), or to {ok: false} after ms.
// It checks at once, on every DOM mutation and every 50 ms (for changes of
// style and layout that no mutation reports).
//
// WaitCondition runs it in the page's own world, where the page may have
// replaced the built-ins (zone.js, which Angular loads, replaces Promise;
// old polyfills replace it with one of their own). So it names no global
// Promise: an async function's promise is the engine's own whatever the
// page did, and it awaits a plain thenable. Without a working
// MutationObserver it checks every 50 ms only.
const Poll = `async (check, ms) => await {then(resolve, reject) {
	let done = false, busy = false, obs = null;
	const finish = (f, v) => {
		if (done) return;
		done = true;
		try { if (obs) obs.disconnect(); } catch (e) {}
		clearInterval(iv); clearTimeout(to); f(v);
	};
	const tick = async () => {
		if (done || busy) return;
		busy = true;
		try {
			let v = check();
			if (v && typeof v.then === 'function') v = await v;
			if (v) finish(resolve, {ok: true, value: v});
		} catch (e) { finish(reject, e); }
		busy = false;
	};
	try {
		obs = new MutationObserver(tick);
		obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
	} catch (e) { obs = null; }
	const iv = setInterval(tick, 50);
	const to = setTimeout(() => finish(resolve, {ok: false}), ms);
	tick();
}}`

// Visible is the check of WaitVisible: the first element matching sel has
// a non-empty box and is not hidden by visibility or content-visibility.
// It is a fmt template: its one %s is the selector as a JSON string.
const Visible = `() => {
	const el = document.querySelector(%s);
	if (!el) return false;
	const r = el.getBoundingClientRect();
	if (r.width === 0 || r.height === 0) return false;
	return el.checkVisibility ? el.checkVisibility({visibilityProperty: true}) : getComputedStyle(el).visibility !== 'hidden';
}`

// PageInfo reads the page's URL, title, viewport size, scroll offset and
// document size.
const PageInfo = `(() => {
	const d = document.documentElement, b = document.body;
	return {url: location.href, title: document.title, vw: innerWidth, vh: innerHeight,
		sx: scrollX, sy: scrollY,
		pw: Math.max(d ? d.scrollWidth : 0, b ? b.scrollWidth : 0),
		ph: Math.max(d ? d.scrollHeight : 0, b ? b.scrollHeight : 0)};
})()`

// Status runs in every new document of a tab's main frame before the
// page's own scripts (Page.addScriptToEvaluateOnNewDocument) and reports
// the document's HTTP status as the title of a console.timeStamp
// (StatusTitle and the status), which the Performance domain sends as a
// Performance.metrics event. The document's renderer sends it right after
// its Page.frameNavigated and before any of its lifecycle events, so
// Navigate has the status when the load event comes, at no round trip: a
// Runtime.evaluate sent at commit is answered only after the renderer's
// loading work (2-5 ms after the load event on a small page), one sent
// after the load event later still. It needs neither the Runtime domain
// nor the Network domain. The page cannot see it: it has no effect but the
// event.
const Status = `if (window === window.top) { const n = performance.getEntriesByType("navigation")[0]; console.timeStamp("` + StatusTitle + `" + ((n && n.responseStatus) || 0)); }`

// StatusTitle prefixes the title of Status's timestamp.
const StatusTitle = "browserpool-document-status:"

// LoadedStatus reads the main resource's HTTP status (the Navigation
// Timing entry's responseStatus, Chromium 109+) and the document's URL:
// {status, url}, where Status's report did not come.
const LoadedStatus = `(() => { const n = performance.getEntriesByType("navigation")[0]; return {status: (n && n.responseStatus) || 0, url: location.href}; })()`

// DragWatchArm arms a watch on a drag's source (this) for its press and
// first move: listeners in the capture phase on its window record the
// first mousedown and the first dragstart of its document before any
// element's handler can stop them, and one on the source itself tells
// whether the press reached it (it also sees events inside its shadow
// trees).
const DragWatchArm = `function() {
	const el = this, win = el.ownerDocument.defaultView;
	const w = {el, down: null, start: null, hit: new WeakSet()};
	const onDown = e => { if (!w.down) w.down = e; };
	const onStart = e => { if (!w.start) w.start = e; };
	const onEl = e => { w.hit.add(e); };
	win.addEventListener('mousedown', onDown, true);
	win.addEventListener('dragstart', onStart, true);
	el.addEventListener('mousedown', onEl, true);
	w.stop = () => {
		win.removeEventListener('mousedown', onDown, true);
		win.removeEventListener('dragstart', onStart, true);
		el.removeEventListener('mousedown', onEl, true);
	};
	return w;
}`

// DragWatchRead reads and disarms a drag watch (this) into a dragReport.
// Whether the browser drags the source itself is judged now (a page may
// make an element draggable as it is pressed) as Chromium does: by the
// nearest of the source and its ancestors that says, with
// draggable="true" or "false", or by being an image or a link with an
// href.
const DragWatchRead = `function() {
	const w = this, d = w.down, s = w.start;
	w.stop();
	const describe = ` + Describe + `;
	let draggable = false;
	for (let n = w.el; n; n = n.parentNode || n.host) {
		if (n.nodeType === 1 && (n.draggable || n.hasAttribute('draggable'))) { draggable = n.draggable === true; break; }
	}
	return {
		draggable,
		pressed: !!d,
		reached: !!d && w.hit.has(d),
		pressOn: d && !w.hit.has(d) ? describe(d.target) || 'a node without a description' : '',
		handled: !!d && d.defaultPrevented,
		started: !!s,
		cancelled: !!s && s.defaultPrevented,
	};
}`

// NextFrames resolves once the document of its element (this) has drawn
// twice, or after 200 ms (a hidden page draws nothing).
const NextFrames = `function() { return new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(() => r())); setTimeout(r, 200); }); }`
