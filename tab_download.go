// Room: downloads. sessDownloads.mu (Session.downloads) guards whether a
// session's download behaviour is set and which tabs stream a remote
// download (tab_remotefiles.go). Waits read event streams they open
// themselves; no lock is held during a CDP call or file I/O.

package browserpool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/browser"
	"github.com/mafredri/cdp/protocol/page"
	cdptarget "github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/redact"
)

// ErrDownloadFailed: a download was cancelled or failed in the browser.
// Returned by Tab.WaitDownload.
var ErrDownloadFailed = errors.New("download failed")

// DefaultDownloadTimeout bounds Tab.WaitDownload when its context has no
// deadline; a deadline of the caller's own, earlier or later, bounds it
// instead.
const DefaultDownloadTimeout = 2 * time.Minute

// Download is a file a tab downloaded.
type Download struct {
	SessionID     string // the session of the tab
	TabID         string // the tab that downloaded it (in one of its frames, or a window it opened); "" in Session.Downloads when no WaitDownload claimed it and it did not start in a tab's main frame
	Path          string // absolute, inside <session output dir>/downloads
	SuggestedName string // the name the server or link suggested
	URL           string // token-like query values redacted
	Bytes         int64  // the file's size
}

// DownloadDir returns where the session's downloads land:
// <output dir>/downloads. Every download of the session goes there, under
// its suggested name made safe and unique, whether a Tab.WaitDownload
// waited for it or not (Session.Downloads lists them); a download the
// session could not move keeps the browser's name for it (a GUID). The
// directory is made by the first download (the browser creates it, 0700),
// so a session that downloads nothing leaves no directory behind.
func (s *Session) DownloadDir() string { return filepath.Join(s.output, downloadsDirName) }

// downloadsDirName is DownloadDir's name inside the session's output dir.
const downloadsDirName = "downloads"

// sessDownloads records whether a session's downloads are routed, and the
// downloads themselves (session_downloads.go).
type sessDownloads struct {
	mu  sync.Mutex
	set bool // guarded by mu; Browser.setDownloadBehavior succeeded
	// streaming holds the tabs running a remote WaitDownload (one at a
	// time per tab: it owns the tab's Fetch domain); guarded by mu.
	streaming map[string]bool
	// The downloads the browser reported (session_downloads.go), guarded
	// by mu: records by guid, their guids oldest first, and the completed
	// ones Session.Downloads lists (a record claimed after it was listed
	// shows its tab there).
	recs  map[string]*dlRecord
	order []string
	done  []*dlRecord
	// recorded is closed and replaced when a record is added, for the
	// waits of beganWithin; nil until one waits. Guarded by mu.
	recorded chan struct{}
}

// ensureDownloads routes the session's downloads into DownloadDir, once.
// It does not create the directory: the browser makes it when the first
// download begins (WaitDownload checks it is no link first). A remote
// browser (a fleet lease) is told to deny downloads, with their events on:
// WaitDownload takes their bytes over CDP.
func (s *Session) ensureDownloads(ctx context.Context) error {
	d := &s.downloads
	d.mu.Lock()
	set := d.set
	d.mu.Unlock()
	if set {
		return nil
	}
	args := browser.NewSetDownloadBehaviorArgs("allowAndName").SetDownloadPath(s.DownloadDir())
	if s.remote() {
		// A path here would name a directory on the browser's machine: a
		// remote browser writes nothing, and WaitDownload streams the bytes
		// over CDP instead (tab_remotefiles.go).
		args = browser.NewSetDownloadBehaviorArgs("deny")
	}
	if err := s.browserCall(ctx, "Browser.setDownloadBehavior", args.SetEventsEnabled(true), nil); err != nil {
		return s.wrap("Tab.WaitDownload", "", err)
	}
	d.mu.Lock()
	d.set = true
	d.mu.Unlock()
	s.watchDownloads()
	return nil
}

// WaitDownload runs trigger (a click on a download link, say; nil to wait
// for a download the page starts by itself) and waits for the download it
// starts in this tab to complete: in the tab's page or one of its frames
// (of any site), or in a window the tab opened since WaitDownload began (a
// target=_blank link or window.open answered with a file, whose window the
// browser closes). The file lands in the session's
// DownloadDir under the suggested name, made safe (no directories, no
// control characters) and unique (" (1)", " (2)", … before the
// extension); it never overwrites a file. A cancelled or failed download
// is an ErrDownloadFailed error, and so is a trigger's own error (an
// *Error of the package's comes back as it is; another error inside one,
// reachable with errors.Is and errors.As). Bounded by ctx and
// DefaultDownloadTimeout.
//
// On a remote browser (a Browserless or SeleniumGrid session) the file
// still lands in the local DownloadDir: while WaitDownload runs, the tab's
// document responses are paused and their bodies streamed over CDP into
// DownloadDir, and the browser (told to deny downloads, so it writes
// nothing on its machine) names the download. A download the tab's own
// document requests did not carry is read back from the page (a blob: URL)
// or its URL (data:); what cannot be brought over (a blob the page revoked
// at once, a download from an out-of-process frame) is an ErrFileTransfer
// error. One limit there: a body the site sends without a Content-Length
// (chunked) and cuts short cannot be told from a whole one, as the
// browser's stream ends the same way (measured on Chromium 156 through
// Browserless), so it comes back as a download of what arrived; a local
// browser reports such a cut as ErrDownloadFailed. See tab_remotefiles.go
// for the details.
//
// When ctx ends while the file is arriving, the download is cancelled in
// the browser (it would land later, beside the one a retry starts) and the
// error says how much had arrived.
func (t *Tab) WaitDownload(ctx context.Context, trigger func(ctx context.Context) error) (dl Download, err error) {
	const op = "Tab.WaitDownload"
	end, err := t.begin(op)
	if err != nil {
		return Download{}, err
	}
	defer end()
	x := t.ext()
	start := time.Now()
	defer func() {
		args := dl.URL
		if dl.Path != "" {
			args += " -> " + filepath.Base(dl.Path)
		}
		x.record("download", args, start, &err)
		if err == nil && t.s.remote() {
			t.s.downloads.add(dl) // brought over: no browser event placed it
		}
	}()
	caller := ctx
	ctx, cancel := waitCtx(ctx, DefaultDownloadTimeout)
	defer cancel()
	if err := t.s.ensureDownloads(ctx); err != nil { // if it failed at launch
		return Download{}, err
	}
	if !t.s.remote() {
		// The browser writes there by path: never through a link.
		for _, dir := range []string{t.s.output, t.s.DownloadDir()} {
			if err := t.s.outputDir(op, dir, false); err != nil {
				err.(*Error).Tab = t.id
				return Download{}, err
			}
		}
	}
	// timeout says what was still awaited when ctx ended: no download
	// yet (started false), or the end of one that began.
	timeoutAt := func(what string, started bool) error {
		if caller.Err() == nil && ctx.Err() != nil {
			e := newError(op, ErrTimeout, fmt.Sprintf("%s within %v", what, DefaultDownloadTimeout))
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "check that the action starts a download; pass a context with a longer deadline for big files"
			if trigger == nil {
				e.Hint = nilTriggerHint
			}
			if started {
				e.Hint = "the file is big or the site slow: trigger it again with a context whose deadline is longer"
			}
			return e
		}
		if caller.Err() != nil {
			// The caller's own deadline: say what was still awaited.
			e := newError(op, caller.Err(), what)
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "the caller's context ended first: check that the action starts a download, and pass a longer deadline for a big file"
			if trigger == nil {
				e.Hint = "the caller's context ended first; " + nilTriggerHint
			}
			if started {
				e.Hint = "the caller's context ended first: trigger the download again with a longer deadline"
			}
			return e
		}
		return t.s.wrap(op, t.id, ctx.Err())
	}
	timeout := func(what string) error { return timeoutAt(what, false) }
	// A stream ends with ctx, or when the connection or tab goes away.
	recvErr := func(what string, err error) error {
		if ctx.Err() != nil {
			return timeout(what)
		}
		return t.s.wrap(op, t.id, err)
	}
	if t.s.remote() {
		return t.waitRemoteDownload(ctx, op, trigger, timeoutAt)
	}
	b := t.s.Browser().Browser
	begins, err := b.DownloadWillBegin(ctx)
	if err != nil {
		return Download{}, t.s.wrap(op, t.id, err)
	}
	defer begins.Close()
	progress, err := b.DownloadProgress(ctx)
	if err != nil {
		return Download{}, t.s.wrap(op, t.id, err)
	}
	defer progress.Close()
	stop := t.direct.Listen() // the download's events
	defer stop()
	nav := t.lifecycle.mark()
	opens := x.opens.Load() // windows the tab opened before the trigger
	if err := runTrigger(ctx, trigger); err != nil {
		return Download{}, t.triggerErr(ctx, err, timeout)
	}
	// A trigger that opened a page (a link to an HTML page, a 404) started
	// no download, unless that page starts one soon after it loads.
	var paged <-chan time.Time
	if trigger != nil && t.lifecycle.commits.Load() > nav.commits {
		pt := time.NewTimer(pageDownloadWait)
		defer pt.Stop()
		paged = pt.C
	}
	// The download this tab started.
	var guid string
	for guid == "" {
		select {
		case <-paged:
			return Download{}, t.pageNotDownload(op)
		case <-begins.Ready():
			ev, err := begins.Recv()
			if err != nil {
				return Download{}, recvErr("no download started", err)
			}
			if x.ownsFrame(ctx, ev.FrameID, x.opens.Load() > opens) {
				guid = ev.GUID
				dl = Download{SessionID: t.s.id, TabID: t.id, SuggestedName: ev.SuggestedFilename, URL: downloadURL(ev.URL)}
			}
		case <-ctx.Done():
			return Download{}, timeout("no download started")
		}
	}
	var received, total float64 // the most any progress event reported (a cancel reports 0 received), and the size the site announced (0: none)
	for {
		select {
		case <-progress.Ready():
			ev, err := progress.Recv()
			if err != nil {
				return dl, recvErr("the download did not complete", err)
			}
			if ev.GUID != guid {
				continue
			}
			received, total = max(received, ev.ReceivedBytes), max(total, ev.TotalBytes)
			switch ev.State {
			case "completed":
				// The session's own watch may be moving it too: one of
				// the two does, the other gets where it went.
				t.s.downloads.claim(guid, dl)
				placed, err := t.s.placeOnce(op, guid, dl.SuggestedName)
				if err != nil {
					return dl, err
				}
				dl.Path, dl.Bytes = placed.Path, placed.Bytes
				return dl, nil
			case "canceled":
				detail := fmt.Sprintf("%s was cancelled after %s", echo(dl.URL), bytesOf(int64(received), int64(total)))
				if received == 0 {
					// A cancel reports 0 received, whatever arrived
					// before it (a connection cut after 5 bytes).
					detail = fmt.Sprintf("%s was cancelled before it completed (%s)", echo(dl.URL), announced(int64(total)))
				}
				e := newError(op, ErrDownloadFailed, detail)
				e.Session, e.Tab = t.s.id, t.id
				return dl, e
			}
		case <-ctx.Done():
			// Cancelled, so that it does not land later beside the one a
			// retry starts (as "name (1).ext").
			t.s.cancelDownload(guid)
			return dl, timeoutAt(fmt.Sprintf("the download of %s did not complete: cancelled after %s", echo(dl.URL), bytesOf(int64(received), int64(total))), true)
		}
	}
}

// bytesOf says how much of a download arrived: "n of total bytes", or "n
// bytes (the site announced no size)".
func bytesOf(n, total int64) string {
	if total <= 0 {
		return fmt.Sprintf("%d bytes (%s)", n, announced(total))
	}
	return fmt.Sprintf("%d of %d bytes", n, total)
}

// announced says the size a site announced for a download.
func announced(total int64) string {
	if total <= 0 {
		return "the site announced no size"
	}
	return fmt.Sprintf("the site announced %d bytes", total)
}

// downloadURLLimit bounds the URL a Download reports.
const downloadURLLimit = 2048

// dataURLLimit is the longest data: URL a Download reports whole.
const dataURLLimit = 256

// downloadURL is the URL a Download reports for raw: redacted, a data: URL
// longer than dataURLLimit by its media type and length instead of its
// content (a page's data: link can carry megabytes, and a Download is read
// by people and models), any other cut to downloadURLLimit characters.
func downloadURL(raw string) string {
	if rest, ok := strings.CutPrefix(raw, "data:"); ok && len(raw) > dataURLLimit {
		meta, data, _ := strings.Cut(rest, ",")
		return fmt.Sprintf("data:%s,… (%d characters)", axtext.Cut(meta, 100), len(data))
	}
	return axtext.Cut(redact.Scrub(raw), downloadURLLimit)
}

// cancelDownload cancels the browser's download guid, on a bound of its
// own (the caller's context has ended); best effort.
func (s *Session) cancelDownload(guid string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.browserCall(ctx, "Browser.cancelDownload", browser.NewCancelDownloadArgs(guid), nil)
}

// ownsFrame reports whether frame belongs to this tab: its main frame, one
// of its same-process frames, an out-of-process frame (a site's iframe in
// a process of its own) inside it, or, when the tab opened a window since
// the download was awaited (opened), a frame of no target that no other
// tab of the session holds: a target=_blank link or window.open answered
// with a file downloads in the new window's frame before the browser
// makes the window a target (and closes the window once the download
// starts).
func (x *tabExt) ownsFrame(ctx context.Context, frame page.FrameID, opened bool) bool {
	if x.knowsFrame(frame) {
		return true
	}
	if tab, ok := x.t.s.targetTab(ctx, string(frame)); ok {
		return tab == x.t.id
	}
	if x.inFrameTree(ctx, frame) {
		return true
	}
	if !opened {
		return false
	}
	x.t.s.mu.Lock()
	others := make([]*Tab, 0, len(x.t.s.tabs))
	for _, t := range x.t.s.tabs {
		if t != x.t {
			others = append(others, t)
		}
	}
	x.t.s.mu.Unlock()
	for _, t := range others {
		if t.ext().knowsFrame(frame) {
			return false
		}
		// A page busy in a script, or held by a pending navigation,
		// answers no frame tree: it holds nothing then, rather than the
		// download waiting on it.
		octx, cancel := context.WithTimeout(ctx, otherTabAsk)
		held := t.ext().inFrameTree(octx, frame)
		cancel()
		if held {
			return false // another tab's iframe (two holders share a session)
		}
	}
	return true
}

// otherTabAsk bounds ownsFrame's question to each other tab of the session.
const otherTabAsk = 300 * time.Millisecond

// knowsFrame reports whether frame is the tab's main frame or a frame its
// refs know, without asking the browser.
func (x *tabExt) knowsFrame(frame page.FrameID) bool {
	if string(frame) == x.t.id {
		return true
	}
	x.refs.mu.Lock()
	defer x.refs.mu.Unlock()
	_, ok := x.refs.frames[string(frame)]
	return ok
}

// inFrameTree reports whether frame is in the tab's frame tree (its frames
// in its own process; one round trip; a tab that does not answer holds
// nothing).
func (x *tabExt) inFrameTree(ctx context.Context, frame page.FrameID) bool {
	tree, err := invoke[page.GetFrameTreeReply](ctx, x.t.direct, "Page.getFrameTree", nil)
	if err != nil {
		return false
	}
	var walk func(page.FrameTree) bool
	walk = func(ft page.FrameTree) bool {
		if ft.Frame.ID == frame {
			return true
		}
		for _, c := range ft.ChildFrames {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(tree.FrameTree)
}

// pageDownloadWait bounds WaitDownload's wait for a download after its
// trigger opened a page instead: a page that starts its file itself ("your
// download begins in a moment") does so within it.
const pageDownloadWait = 5 * time.Second

// pageNotDownload is WaitDownload's error when its trigger opened a page
// and no download began: it names the page and its HTTP status.
func (t *Tab) pageNotDownload(op string) error {
	_, loader := t.lifecycle.mainDoc()
	d := t.docs.get(loader)
	page := "a page"
	if d.url != "" {
		page += " (" + d.url
		if d.status != 0 {
			page += fmt.Sprintf(", HTTP %d", d.status)
		}
		page += ")"
	}
	e := newError(op, ErrDownloadFailed, fmt.Sprintf("the trigger opened %s instead of a download, and no download began within %v", page, pageDownloadWait))
	e.Session, e.Tab = t.s.id, t.id
	e.Hint = "the link leads to a page, not a file: take a snapshot of the page the tab is on, and look there for the download link"
	return e
}

// runTrigger runs a WaitDownload's trigger. A navigation the browser
// aborted (net::ERR_ABORTED) is what a navigation to a URL that answers
// with a file does: the download is under way, so it is no error here.
func runTrigger(ctx context.Context, trigger func(context.Context) error) error {
	if trigger == nil {
		return nil
	}
	err := trigger(ctx)
	var e *Error
	if errors.As(err, &e) && e.Class == ErrNavigation && strings.Contains(e.Detail, "net::ERR_ABORTED") {
		return nil
	}
	return err
}

// nilTriggerHint is the hint of a WaitDownload without a trigger that saw
// no download begin: the usual cause is a click made before the call,
// whose download began before WaitDownload was listening.
const nilTriggerHint = "WaitDownload(ctx, nil) waits only for a download that begins after the call; " +
	"if a click started it, pass that click as the trigger instead of clicking first " +
	"(a local session saves a download nobody waited for: Session.Downloads lists it once complete)"

// triggerErr is WaitDownload's error for its trigger's err: the wait's
// timeout (what it gives for "no download started") when ctx ended, which
// cut the trigger short; a package error naming the tab; or the caller's
// own error inside an ErrDownloadFailed one (errors.Is and errors.As reach
// it).
func (t *Tab) triggerErr(ctx context.Context, err error, timeout func(string) error) error {
	if ctx.Err() != nil {
		return timeout("no download started")
	}
	var e *Error
	if !errors.As(err, &e) {
		e := newError("Tab.WaitDownload", ErrDownloadFailed, "the trigger failed before any download began")
		e.Session, e.Tab, e.Err = t.s.id, t.id, err
		e.Hint = "fix what the trigger does; WaitDownload waits for the download it starts"
		return e
	}
	if e.Session != "" {
		return err
	}
	return retag(err, func(c *Error) { c.Session, c.Tab = t.s.id, t.id })
}

// maxTargetChain bounds targetTab's walk up the targets' parents and
// openers (a frame in a frame in a popup is three).
const maxTargetChain = 8

// targetTab returns the tab a target belongs to, walking up from target
// (a frame's id is its target's when the frame has a process of its own):
// an out-of-process iframe to the target of its parent frame, a window a
// page opened to its opener. ok is false when target is no target (a
// frame in its parent's process) or is gone, and tab "" when the chain
// leads to no tab of the session.
func (s *Session) targetTab(ctx context.Context, target string) (tab string, ok bool) {
	for range maxTargetChain {
		s.mu.Lock()
		known := s.tabs[target] != nil
		s.mu.Unlock()
		if known {
			return target, true
		}
		// The protocol package's Info has no parentId: read our own.
		reply, err := invoke[struct {
			Info struct {
				OpenerID string `json:"openerId"`
				ParentID string `json:"parentId"` // an iframe's: the target of its parent frame (Chromium 156)
			} `json:"targetInfo"`
		}](ctx, s.direct, "Target.getTargetInfo", cdptarget.NewGetTargetInfoArgs().SetTargetID(cdptarget.ID(target)))
		if err != nil {
			return "", false
		}
		next := cmp.Or(reply.Info.ParentID, reply.Info.OpenerID)
		if next == "" {
			return "", true
		}
		target = next
	}
	return "", true
}
