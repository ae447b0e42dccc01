// Room: the replay page. No locks: it works on a copy of the entries.

package record

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
)

// IndexFile is the name of the replay page in the recording dir.
const IndexFile = "index.html"

//go:embed replay.html
var replayPage []byte

// eventsMarker is where the entries go in replayPage.
var eventsMarker = []byte("/*EVENTS*/")

// WriteIndex writes (or rewrites) the replay page, index.html, beside the
// frames: one self-contained file, no network, no external script, the
// entries embedded as JSON. Opened in a browser it shows a timeline of the
// actions with their frames; the arrow keys step (Home and End jump),
// errors are highlighted, timings shown. Elements with stable ids show the
// current step: #step, #count, #action, #args, #title, #url, #duration,
// #offset, #error (empty without an error), #notes, and the image #frame.
// Close writes it too.
func (r *Recorder) WriteIndex() error {
	root, entries, err := r.snapshot("WriteIndex")
	if err != nil {
		return err
	}
	defer r.inflight.Done()
	return writeIndex("WriteIndex", root, entries)
}

// writeIndex renders entries into the page and replaces index.html in root
// by a rename, so a reader never sees half a page.
func writeIndex(op string, root *os.Root, entries []Entry) error {
	if entries == nil {
		entries = []Entry{}
	}
	// json.Marshal escapes <, > and &, so no text in an entry (a page
	// title, say) can end the script element it is embedded in.
	js, err := json.Marshal(entries)
	if err != nil {
		return newError(op, ErrWrite, "cannot encode the events", err)
	}
	page := bytes.Replace(replayPage, eventsMarker, js, 1)
	tmp := "." + IndexFile + "." + tempTag() + ".tmp"
	if err := root.WriteFile(tmp, page, 0o600); err != nil {
		return newError(op, ErrWrite, "cannot write "+IndexFile, err)
	}
	if err := root.Rename(tmp, IndexFile); err != nil {
		root.Remove(tmp)
		return newError(op, ErrWrite, "cannot write "+IndexFile, err)
	}
	return nil
}
