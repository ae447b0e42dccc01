// Room: files on a remote browser (a fleet lease): Tab.WaitDownload streams
// a download's bytes over CDP into the local DownloadDir (this file), and
// Tab.Upload sends local files' bytes into the page (tab_remoteupload.go).
// It holds no lock of its own:
// sessDownloads.mu (tab_download.go) guards which tabs stream a download,
// and no lock is held during a CDP call or file I/O.
//
// Why over CDP. A fleet's browser runs on another machine: a download path
// given to Browser.setDownloadBehavior names a directory there, and
// DOM.setFileInputFiles reads paths there. Selenium Grid has a file API of
// its own (se:downloadsEnabled, /session/{id}/se/files) but browserless has
// none, and both speak CDP, so one CDP mechanism serves both fleets (and any
// launcher written on the same seam):
//
//   - Downloads. The remote browser is told to deny downloads (it writes
//     nothing on its machine) with download events on. While WaitDownload
//     runs, the tab's Fetch domain pauses every document response (the
//     requests that navigate a frame of the tab, and the ones a link with a
//     download attribute or an attachment starts; subresources are not
//     paused). A 2xx body is taken with Fetch.takeResponseBodyAsStream and
//     read with IO.read into a hidden file in DownloadDir, then handed back
//     to the browser with Fetch.fulfillRequest (same status and headers) so
//     the browser decides, as always, whether it is a page or a download.
//     A download is then announced by Browser.downloadWillBegin with the
//     browser's own file name; its URL finds the streamed body, which is
//     placed under that name like a local download. A response that is
//     surely a download (Content-Disposition: attachment, or
//     application/octet-stream) is handed back with an empty body: it costs
//     one trip over the wire, and has no size limit. Any other response is
//     handed back whole, so it is limited to MaxRemotePassBytes. A body
//     shorter than its Content-Length is ErrDownloadFailed; one without a
//     Content-Length (chunked) cut short is not seen: Fetch's stream ends
//     with eof as for a whole body, and the Network domain reports the
//     request as aborted either way (the browser denies the download). A data: URL is
//     decoded from the URL itself; a blob: URL is fetched again in the tab's
//     main frame and read back in chunks (a blob the page revoked at once
//     is gone: ErrFileTransfer). A download that nothing carried (one
//     started in an out-of-process frame) is ErrFileTransfer.
//   - Uploads. The files are read here (the same path checks as for a local
//     browser), sent in base64 chunks of 512 KiB with Runtime.callFunctionOn
//     into an array in the page, and set on the input as File objects through
//     a DataTransfer; then input and change fire, bubbling, as when a user
//     picks files. One Upload sends at most MaxRemoteUploadBytes in total.
//     A local browser keeps DOM.setFileInputFiles (exact and faster).
//
// While a remote WaitDownload runs, the tab's Fetch domain is the
// library's: a caller's own Fetch.enable on Tab.Client is replaced, and
// turned off when it returns.

package browserpool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mafredri/cdp/protocol/fetch"
	cdpio "github.com/mafredri/cdp/protocol/io"
	"github.com/mafredri/cdp/protocol/network"

	"github.com/browserpool/browserpool/internal/redact"
)

// ErrFileTransfer: a file could not be moved between this machine and a
// remote browser (a fleet lease): an upload over MaxRemoteUploadBytes, or a
// download the remote browser started whose bytes cannot be streamed (a
// blob: URL the page revoked at once, a download from an out-of-process
// frame). Returned by Tab.Upload and
// Tab.WaitDownload on remote sessions.
var ErrFileTransfer = errors.New("file transfer with the remote browser failed")

// MaxRemoteUploadBytes bounds the total size of the files one Tab.Upload
// sends to a remote browser: their bytes travel over CDP and are held in
// the page's memory. A local browser reads the files itself, without limit.
const MaxRemoteUploadBytes = 64 << 20

// MaxRemotePassBytes bounds a document response that Tab.WaitDownload on a
// remote browser streams and hands back to the browser whole (one that is
// not surely a download: no Content-Disposition attachment and not
// application/octet-stream), and so bounds such a download.
const MaxRemotePassBytes = 64 << 20

// remoteChunk is how many bytes one CDP message carries (IO.read, one
// upload call).
const remoteChunk = 512 << 10

// remote reports whether the session's browser runs elsewhere (a fleet
// lease), where files must travel over CDP.
func (s *Session) remote() bool { return s.filesRemote || s.leased }

// loopbackHost reports whether host names this machine's loopback
// (localhost, 127.0.0.0/8, ::1): a browser attached there shares this
// machine's files. Any other host (host.docker.internal, a LAN address)
// may not, so files move over CDP, as with a fleet lease.
func loopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// fileTransferError is an ErrFileTransfer error of tab.
func (s *Session) fileTransferError(op, tab, detail, hint string) *Error {
	e := newError(op, ErrFileTransfer, detail)
	e.Session, e.Tab = s.id, tab
	if hint != "" {
		e.Hint = hint
	}
	return e
}

// streamed is a document response body streamed into DownloadDir.
type streamed struct {
	path string
	n    int64
}

// waitRemoteDownload is WaitDownload on a remote browser (see the Room
// comment): ctx is bounded already, timeout words a deadline.
func (t *Tab) waitRemoteDownload(ctx context.Context, op string, trigger func(ctx context.Context) error, timeoutAt func(what string, started bool) error) (dl Download, err error) {
	s := t.s
	timeout := func(what string) error { return timeoutAt(what, false) }
	d := &s.downloads
	d.mu.Lock()
	if d.streaming[t.id] {
		d.mu.Unlock()
		e := newError(op, ErrInvalidArgument, "a Tab.WaitDownload is already running on this tab")
		e.Session, e.Tab = s.id, t.id
		e.Hint = "wait for it to return first: on a remote browser a tab streams one download at a time"
		return Download{}, e
	}
	if d.streaming == nil {
		d.streaming = map[string]bool{}
	}
	d.streaming[t.id] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.streaming, t.id)
		d.mu.Unlock()
	}()

	begins, err := s.Browser().Browser.DownloadWillBegin(ctx)
	if err != nil {
		return Download{}, s.wrap(op, t.id, err)
	}
	defer begins.Close()
	paused, err := t.cdpClient().Fetch.RequestPaused(ctx)
	if err != nil {
		return Download{}, s.wrap(op, t.id, err)
	}
	defer paused.Close()
	star, doc := "*", network.ResourceTypeDocument
	if err := t.cdpClient().Fetch.Enable(ctx, fetch.NewEnableArgs().SetPatterns([]fetch.RequestPattern{
		{URLPattern: &star, ResourceType: &doc, RequestStage: fetch.RequestStageResponse},
	})); err != nil {
		return Download{}, s.wrap(op, t.id, err)
	}
	bodies := map[string]streamed{} // by URL without fragment
	trigC := make(chan error, 1)
	tctx, tcancel := context.WithCancel(ctx)
	started := false
	defer func() {
		// Disabling Fetch lets paused requests go on, so a trigger waiting
		// for one returns; then the trigger is joined.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		t.cdpClient().Fetch.Disable(dctx)
		cancel()
		tcancel()
		if started && trigC != nil {
			<-trigC
		}
		for _, b := range bodies {
			os.Remove(b.path)
		}
	}()
	if trigger != nil {
		// The trigger runs beside the loop: it may wait for a response
		// only the loop lets through.
		started = true
		go func() { trigC <- runTrigger(tctx, trigger) }()
	} else {
		trigC = nil
	}
	recvErr := func(err error) error {
		if ctx.Err() != nil {
			return timeout("no download started")
		}
		return s.wrap(op, t.id, err)
	}
	for {
		select {
		case err := <-trigC:
			trigC = nil
			if err != nil {
				return Download{}, t.triggerErr(ctx, err, timeout)
			}
		case <-paused.Ready():
			ev, err := paused.Recv()
			if err != nil {
				return Download{}, recvErr(err)
			}
			b, err := t.streamResponse(ctx, op, ev)
			var stop *streamStopped
			if errors.As(err, &stop) {
				// The browser hands the stream over in chunks: bytes it
				// holds short of one are not counted (measured through
				// Browserless: 1000 sent, 0 read).
				return Download{}, timeoutAt(fmt.Sprintf("the download of %s did not complete: cancelled after %s had reached this machine", echo(downloadURL(stop.url)), bytesOf(stop.n, stop.length)), true)
			}
			if err != nil {
				return Download{}, err
			}
			if b.path != "" {
				key := urlKey(ev.Request.URL)
				if old, ok := bodies[key]; ok {
					os.Remove(old.path)
				}
				bodies[key] = b
			}
		case <-begins.Ready():
			ev, err := begins.Recv()
			if err != nil {
				return Download{}, recvErr(err)
			}
			if !t.ext().ownsFrame(ctx, ev.FrameID, false) {
				continue
			}
			dl = Download{SessionID: s.id, TabID: t.id, SuggestedName: ev.SuggestedFilename, URL: downloadURL(ev.URL)}
			key := urlKey(ev.URL)
			b, ok := bodies[key]
			if !ok && strings.HasPrefix(ev.URL, "data:") {
				b, err = s.saveDataURL(op, t.id, ev.URL)
				if err != nil {
					return dl, err
				}
				ok = true
			}
			if !ok && strings.HasPrefix(ev.URL, "blob:") {
				if b, err = t.readBlob(ctx, op, ev.URL); err != nil {
					return dl, err
				}
				ok = true
			}
			if !ok {
				return dl, s.fileTransferError(op, t.id,
					fmt.Sprintf("the remote browser started a download of %s that no document request of the tab carried (a frame in another process, say): its bytes cannot be brought to this machine", echo(dl.URL)),
					"have the page link to the file over http(s) in the tab itself, or run this task on a local browser")
			}
			delete(bodies, key)
			path, n, err := s.placeFile(op, b.path, b.n, dl.SuggestedName)
			if err != nil {
				os.Remove(b.path)
				return dl, err
			}
			dl.Path, dl.Bytes = path, n
			return dl, nil
		case <-ctx.Done():
			return Download{}, timeout("no download started")
		}
	}
}

// urlKey is u without its fragment.
func urlKey(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// streamResponse handles one paused document response: a 2xx body is
// streamed into a hidden file of DownloadDir and handed back to the browser
// (empty when the response is surely a download); anything else goes on
// untouched. It returns the streamed body (zero when none was kept).
func (t *Tab) streamResponse(ctx context.Context, op string, ev *fetch.RequestPausedReply) (streamed, error) {
	c := t.cdpClient()
	id := ev.RequestID
	status := 0
	if ev.ResponseStatusCode != nil {
		status = *ev.ResponseStatusCode
	}
	if ev.ResponseErrorReason != nil || status < 200 || status > 299 || status == 204 || status == 205 {
		if err := c.Fetch.ContinueResponse(ctx, fetch.NewContinueResponseArgs(id)); err != nil {
			return streamed{}, t.s.wrap(op, t.id, err)
		}
		return streamed{}, nil
	}
	abort := func() {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		c.Fetch.FailRequest(actx, fetch.NewFailRequestArgs(id, network.ErrorReasonAborted))
		cancel()
	}
	var headers []fetch.HeaderEntry
	length := int64(-1) // the body's announced length, as sent (compressed or not)
	encoded := false    // compressed: the stream gives the decoded body, whose length length is not
	sure := false
	for _, h := range ev.ResponseHeaders {
		switch strings.ToLower(h.Name) {
		case "content-length":
			if n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 64); err == nil {
				length = n
			}
			continue // the body handed back has its own length
		case "content-encoding":
			if v := strings.TrimSpace(h.Value); v != "" && !strings.EqualFold(v, "identity") {
				encoded = true
			}
			continue // the streamed body is decoded already
		case "content-disposition":
			if v, _, err := mime.ParseMediaType(h.Value); err == nil && v == "attachment" {
				sure = true
			}
		case "content-type":
			if v, _, err := mime.ParseMediaType(h.Value); err == nil && v == "application/octet-stream" {
				sure = true
			}
		}
		headers = append(headers, h)
	}
	dir := t.s.DownloadDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		abort()
		return streamed{}, t.s.artifactErr(op, "downloads", err)
	}
	f, err := os.CreateTemp(dir, ".stream-*")
	if err != nil {
		abort()
		return streamed{}, t.s.artifactErr(op, "downloads", err)
	}
	limit := int64(-1)
	if !sure {
		limit = MaxRemotePassBytes
	}
	n, rerr := t.readBody(ctx, id, f, limit)
	if cerr := f.Close(); rerr == nil {
		rerr = cerr
	}
	fail := func(e error) (streamed, error) {
		abort()
		os.Remove(f.Name())
		return streamed{}, e
	}
	u := redact.Scrub(ev.Request.URL)
	switch {
	case errors.Is(rerr, errTooBig):
		return fail(t.s.fileTransferError(op, t.id,
			fmt.Sprintf("the response of %s is over %d MiB and not marked as a download (no Content-Disposition: attachment): it cannot pass through the remote browser's download stream", echo(u), MaxRemotePassBytes>>20),
			"have the server send big files with Content-Disposition: attachment (no size limit then), or run this task on a local browser"))
	case ctx.Err() != nil:
		if encoded {
			length = -1 // announced for the compressed body, not the one read
		}
		return fail(&streamStopped{url: ev.Request.URL, n: n, length: length})
	case rerr != nil || length >= 0 && !encoded && n != length:
		if !sure {
			// A page cut short fails in the browser as it would have.
			return fail(nil)
		}
		e := newError(op, ErrDownloadFailed, fmt.Sprintf("%s was cut short after %d of %d bytes", echo(u), n, length))
		e.Session, e.Tab, e.Err = t.s.id, t.id, rerr
		return fail(e)
	}
	var body []byte
	if !sure {
		if body, err = os.ReadFile(f.Name()); err != nil {
			return fail(t.s.artifactErr(op, "downloads", err))
		}
	}
	// Fetch.fulfillRequest by hand: the typed args drop an empty body.
	if err := t.direct.Invoke(ctx, "Fetch.fulfillRequest", struct {
		ID      fetch.RequestID     `json:"requestId"`
		Code    int                 `json:"responseCode"`
		Headers []fetch.HeaderEntry `json:"responseHeaders"`
		Body    string              `json:"body"`
	}{id, status, headers, base64.StdEncoding.EncodeToString(body)}, nil); err != nil {
		return fail(t.s.wrap(op, t.id, err))
	}
	return streamed{path: f.Name(), n: n}, nil
}

// streamStopped: the context ended a response's stream part way, after n
// of length bytes (length -1: none announced).
type streamStopped struct {
	url       string
	n, length int64
}

func (e *streamStopped) Error() string {
	return fmt.Sprintf("the stream of %s stopped after %d bytes", redact.Scrub(e.url), e.n)
}

// errTooBig: a streamed body passed its limit.
var errTooBig = errors.New("body over the limit")

// readBody streams the paused response id's body into w, at most limit
// bytes (no limit when negative), and returns how many bytes it wrote.
func (t *Tab) readBody(ctx context.Context, id fetch.RequestID, w io.Writer, limit int64) (int64, error) {
	c := t.cdpClient()
	st, err := c.Fetch.TakeResponseBodyAsStream(ctx, fetch.NewTakeResponseBodyAsStreamArgs(id))
	if err != nil {
		return 0, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		c.IO.Close(cctx, cdpio.NewCloseArgs(st.Stream))
		cancel()
	}()
	var n int64
	for {
		r, err := c.IO.Read(ctx, cdpio.NewReadArgs(st.Stream).SetSize(remoteChunk))
		if err != nil {
			return n, err
		}
		b := []byte(r.Data)
		if r.Base64Encoded != nil && *r.Base64Encoded {
			if b, err = base64.StdEncoding.DecodeString(r.Data); err != nil {
				return n, err
			}
		}
		if limit >= 0 && n+int64(len(b)) > limit {
			return n, errTooBig
		}
		if _, err := w.Write(b); err != nil {
			return n, err
		}
		n += int64(len(b))
		if r.EOF {
			return n, nil
		}
	}
}

// blobSlice returns bytes [off, off+n) of the Blob this as base64.
const blobSlice = `async function(off, n) {
  const u = new Uint8Array(await this.slice(off, off + n).arrayBuffer());
  let s = '';
  for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode.apply(null, u.subarray(i, i + 8192));
  return btoa(s);
}`

// readBlob copies the Blob a blob: URL names, fetched in the tab's main
// frame (where the page made it), into a hidden file of DownloadDir, in
// chunks. A URL the page has revoked already is an ErrFileTransfer error.
func (t *Tab) readBlob(ctx context.Context, op, u string) (streamed, error) {
	x := t.ext()
	f := x.refs.top
	group := x.newGroup()
	defer releaseGroup(ctx, f, group)
	gone := func(why string) error {
		return t.s.fileTransferError(op, t.id,
			fmt.Sprintf("the page started a download of %s, and the remote browser could not read that blob back (%s): the page probably revoked the URL at once", echo(redact.Scrub(u)), why),
			"a page that revokes its blob: URLs at once cannot be downloaded from a remote browser; run this task on a local browser")
	}
	q, _ := json.Marshal(u)
	var reply struct {
		Result    remoteValue      `json:"result"`
		Exception *json.RawMessage `json:"exceptionDetails"`
	}
	if err := f.d.Invoke(ctx, "Runtime.evaluate", struct {
		Expr  string `json:"expression"`
		Group string `json:"objectGroup"`
		Await bool   `json:"awaitPromise"`
	}{"fetch(" + string(q) + ").then(r => r.blob())", group, true}, &reply); err != nil {
		return streamed{}, t.s.wrap(op, t.id, err)
	}
	if reply.Exception != nil || reply.Result.ObjectID == "" {
		return streamed{}, gone("fetching it failed")
	}
	blob := reply.Result.ObjectID
	sz, err := x.callFn(ctx, op, f, blob, `function() { return this.size; }`, nil, true)
	if err != nil {
		return streamed{}, err
	}
	size, err := strconv.ParseInt(string(sz.Value), 10, 64)
	if err != nil {
		return streamed{}, gone("no size")
	}
	dir := t.s.DownloadDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return streamed{}, t.s.artifactErr(op, "downloads", err)
	}
	out, err := os.CreateTemp(dir, ".stream-*")
	if err != nil {
		return streamed{}, t.s.artifactErr(op, "downloads", err)
	}
	fail := func(e error) (streamed, error) {
		out.Close()
		os.Remove(out.Name())
		return streamed{}, e
	}
	for off := int64(0); off < size; off += remoteChunk {
		r, err := x.callFn(ctx, op, f, blob, blobSlice, []any{off, remoteChunk}, true)
		if err != nil {
			return fail(err)
		}
		var b64 string
		if err := json.Unmarshal(r.Value, &b64); err != nil {
			return fail(gone("an unreadable chunk"))
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return fail(gone("an unreadable chunk"))
		}
		if _, err := out.Write(b); err != nil {
			return fail(t.s.artifactErr(op, "downloads", err))
		}
	}
	if err := out.Close(); err != nil {
		os.Remove(out.Name())
		return streamed{}, t.s.artifactErr(op, "downloads", err)
	}
	return streamed{path: out.Name(), n: size}, nil
}

// saveDataURL writes the bytes of a data: URL into a hidden file of
// DownloadDir.
func (s *Session) saveDataURL(op, tab, u string) (streamed, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	var b []byte
	var err error
	if !ok {
		err = errors.New("no comma")
	} else if strings.HasSuffix(meta, ";base64") {
		b, err = base64.StdEncoding.DecodeString(data)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "="))
		}
	} else {
		var t string
		t, err = url.PathUnescape(data)
		b = []byte(t)
	}
	if err != nil {
		return streamed{}, s.fileTransferError(op, tab, "the remote browser started a download of a data: URL this library cannot decode: "+err.Error(), "")
	}
	dir := s.DownloadDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return streamed{}, s.artifactErr(op, "downloads", err)
	}
	f, err := os.CreateTemp(dir, ".stream-*")
	if err != nil {
		return streamed{}, s.artifactErr(op, "downloads", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return streamed{}, s.artifactErr(op, "downloads", err)
	}
	return streamed{path: f.Name(), n: int64(len(b))}, nil
}
