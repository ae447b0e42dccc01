// Room: a session's downloads as the browser reports them
// (Browser.downloadWillBegin and downloadProgress, tapped on the mux's
// reader, no goroutine of its own): each completed download is moved to
// its suggested name once, by whichever of Tab.WaitDownload and the
// session's own watch comes first (sync.Once per download, outside any
// lock), and listed by Session.Downloads. sessDownloads.mu guards the
// records.

package browserpool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// DownloadsLimit is how many completed downloads Session.Downloads keeps;
// older ones are dropped from the list first (their files stay).
const DownloadsLimit = 64

// dlRecord is one download of the session, by the browser's guid.
type dlRecord struct {
	once sync.Once // places the file: the first caller moves it, the others get its result
	dl   Download  // set at begin; Path and Bytes once placed
	err  error     // placing failed
}

// Downloads returns the session's completed downloads, oldest first, at
// most DownloadsLimit: those a Tab.WaitDownload waited for and those
// nobody waited for (a click on a download link, a page that starts a
// file itself), which the session saves the same way, under their
// suggested names made safe and unique in DownloadDir. A download still
// running, cancelled or failed is not listed. A remote session (a fleet
// lease) saves only what Tab.WaitDownload brings over.
func (s *Session) Downloads() []Download {
	d := &s.downloads
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Download, len(d.done))
	for i, r := range d.done {
		out[i] = r.dl
	}
	return out
}

// watchDownloads taps the browser's own session for its download events
// (once, after Browser.setDownloadBehavior routed them into DownloadDir).
func (s *Session) watchDownloads() {
	if s.remote() || s.mux == nil {
		return
	}
	s.mux.Tap("", s.onBrowserEvent) // an ended mux refuses: nothing to watch
}

// onBrowserEvent sees the events of the browser's own session, on the
// mux's reader: it must not block.
func (s *Session) onBrowserEvent(method string, params json.RawMessage) {
	switch method {
	case "Browser.downloadWillBegin":
		var ev struct {
			FrameID           string `json:"frameId"`
			GUID              string `json:"guid"`
			URL               string `json:"url"`
			SuggestedFilename string `json:"suggestedFilename"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.GUID == "" {
			return
		}
		tab := ""
		s.mu.Lock()
		if s.tabs[ev.FrameID] != nil { // a main frame: its tab's id
			tab = ev.FrameID
		}
		s.mu.Unlock()
		s.downloads.record(ev.GUID, Download{SessionID: s.id, TabID: tab, SuggestedName: ev.SuggestedFilename, URL: downloadURL(ev.URL)})
	case "Browser.downloadProgress":
		var ev struct {
			GUID  string `json:"guid"`
			State string `json:"state"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.State != "completed" {
			return
		}
		s.background(func(context.Context) {
			const op = "Session.Downloads"
			for _, dir := range []string{s.output, s.DownloadDir()} {
				if s.outputDir(op, dir, false) != nil {
					return // not through a link: the file keeps the browser's name
				}
			}
			s.placeOnce(op, ev.GUID, "")
		})
	}
}

// record notes the start of download guid, unless known.
func (d *sessDownloads) record(guid string, dl Download) *dlRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.recs[guid]; r != nil {
		return r
	}
	if d.recs == nil {
		d.recs = make(map[string]*dlRecord)
	}
	r := &dlRecord{dl: dl}
	d.recs[guid] = r
	d.order = append(d.order, guid)
	if d.recorded != nil {
		close(d.recorded)
		d.recorded = nil
	}
	if len(d.order) > 2*DownloadsLimit { // forget the oldest records (their files stay)
		for _, g := range d.order[:DownloadsLimit] {
			delete(d.recs, g)
		}
		d.order = slices.Delete(d.order, 0, DownloadsLimit)
	}
	return r
}

// claim gives the record of download guid what a WaitDownload knows of it
// (the tab: the browser's event names only a frame).
func (d *sessDownloads) claim(guid string, dl Download) {
	r := d.record(guid, dl)
	d.mu.Lock()
	defer d.mu.Unlock()
	r.dl.TabID = cmp.Or(r.dl.TabID, dl.TabID)
	r.dl.SuggestedName = cmp.Or(r.dl.SuggestedName, dl.SuggestedName)
	r.dl.URL = cmp.Or(r.dl.URL, dl.URL)
}

// add lists a completed download no record of the watch's placed (a
// remote session's, which WaitDownload brought over).
func (d *sessDownloads) add(dl Download) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listLocked(&dlRecord{dl: dl})
}

// listLocked lists r's download as completed, dropping the oldest past
// DownloadsLimit.
func (d *sessDownloads) listLocked(r *dlRecord) {
	d.done = append(d.done, r)
	if len(d.done) > DownloadsLimit {
		d.done = slices.Delete(d.done, 0, len(d.done)-DownloadsLimit)
	}
}

// placeOnce moves the completed download guid to a safe, unique name in
// DownloadDir, once, and returns where it went: a second caller (the
// session's watch after a WaitDownload, or the other way round) gets the
// first one's result. suggested names the file when the download's start
// was not recorded.
func (s *Session) placeOnce(op, guid, suggested string) (Download, error) {
	d := &s.downloads
	r := d.record(guid, Download{SessionID: s.id, SuggestedName: suggested})
	r.once.Do(func() {
		d.mu.Lock()
		name := r.dl.SuggestedName
		d.mu.Unlock()
		path, n, err := s.placeDownload(op, guid, name)
		d.mu.Lock()
		r.err = err
		if err == nil {
			r.dl.Path, r.dl.Bytes = path, n
			d.listLocked(r)
		}
		d.mu.Unlock()
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	return r.dl, r.err
}

// downloadMark is where a session's record of downloads stood: the guid
// of the newest download begun then ("" if none).
type downloadMark struct{ last string }

// mark returns where the record of downloads stands now.
func (d *sessDownloads) mark() downloadMark {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.order); n > 0 {
		return downloadMark{d.order[n-1]}
	}
	return downloadMark{}
}

// downloadSeen says whether a download began (beganSince).
type downloadSeen int

const (
	downloadUnknown downloadSeen = iota // the session does not see its browser's downloads
	downloadNone
	downloadBegan
)

// beganSince reports whether the browser began a download in tab's main
// frame after m (Browser.downloadWillBegin, which the session records
// when it routes downloads: see session_downloads.go). A remote session's
// browser records none here.
func (d *sessDownloads) beganSince(m downloadMark, tab string, remote bool) downloadSeen {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.beganSinceLocked(m, tab, remote)
}

// beganWithin is beganSince, waiting up to wait for a download to begin
// when none has: the browser reports a download on its own session, which
// nothing orders with the tab's replies, and on a loaded machine its
// report can come well after the navigation it aborted. If ctx ends first
// it returns downloadUnknown.
func (d *sessDownloads) beganWithin(ctx context.Context, m downloadMark, tab string, remote bool, wait time.Duration) downloadSeen {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		d.mu.Lock()
		seen := d.beganSinceLocked(m, tab, remote)
		if d.recorded == nil {
			d.recorded = make(chan struct{})
		}
		ch := d.recorded
		d.mu.Unlock()
		if seen != downloadNone {
			return seen
		}
		select {
		case <-ch:
		case <-timer.C:
			return downloadNone
		case <-ctx.Done():
			return downloadUnknown // the caller stopped waiting: either may be the cause
		}
	}
}

func (d *sessDownloads) beganSinceLocked(m downloadMark, tab string, remote bool) downloadSeen {
	if !d.set || remote {
		return downloadUnknown
	}
	// m.last not found (none then, or forgotten since): all are newer.
	for _, guid := range d.order[slices.Index(d.order, m.last)+1:] {
		if r := d.recs[guid]; r != nil && r.dl.TabID == tab {
			return downloadBegan
		}
	}
	return downloadNone
}

// placeDownload moves the finished download guid to a safe, unique name
// based on suggested, inside DownloadDir, without ever overwriting a file.
func (s *Session) placeDownload(op, guid, suggested string) (string, int64, error) {
	dir := s.DownloadDir()
	src := filepath.Join(dir, guid)
	if !filepath.IsLocal(guid) || strings.ContainsAny(guid, `/\`) {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("the browser named the download %q", guid))
		e.Session = s.id
		return "", 0, e
	}
	fi, err := os.Lstat(src)
	if err != nil || !fi.Mode().IsRegular() {
		e := newError(op, ErrDownloadFailed, "the browser reported the download complete but its file is missing")
		e.Session, e.Err = s.id, err
		return "", 0, e
	}
	return s.placeFile(op, src, fi.Size(), suggested)
}

// placeFile moves src (a file of n bytes inside DownloadDir) to a safe,
// unique name based on suggested, inside DownloadDir, without ever
// overwriting a file.
func (s *Session) placeFile(op, src string, n int64, suggested string) (string, int64, error) {
	dir := s.DownloadDir()
	name := safeFileName(suggested)
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 0; i < 1000; i++ {
		cand := name
		if i > 0 {
			cand = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		dst, err := confine(dir, cand)
		if err != nil {
			// Taken by a symlink (or otherwise unusable): try the next name.
			continue
		}
		// A hard link never replaces an existing file: EEXIST means try
		// the next name.
		if err := os.Link(src, dst); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return "", 0, s.artifactErr(op, cand, err)
		}
		os.Remove(src)
		return dst, n, nil
	}
	return "", 0, s.artifactErr(op, name, errors.New("no free name"))
}

// safeFileName turns a suggested download name into one plain file name:
// the last path element, without control characters, leading dots or
// characters that are special on common file systems, at most 200 bytes,
// and "download" if nothing is left.
func safeFileName(s string) string {
	s = strings.ReplaceAll(s, `\`, "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r == 0 || unicode.IsControl(r) || r == unicode.ReplacementChar:
			return -1
		case strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		}
		return r
	}, s)
	s = strings.TrimLeft(strings.TrimSpace(s), ".")
	s = strings.TrimRight(s, ". ")
	for len(s) > 200 {
		ext := filepath.Ext(s)
		if len(ext) > 20 {
			ext = ""
		}
		r := []rune(strings.TrimSuffix(s, ext))
		s = string(r[:len(r)-1]) + ext
	}
	if s == "" {
		return "download"
	}
	return s
}
