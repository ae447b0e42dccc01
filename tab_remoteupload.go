// Room: uploads to a remote browser (a fleet lease): Tab.Upload sends the
// local files' bytes into the page (why and how: tab_remotefiles.go). No
// lock: each upload reads its files and writes the page only.

package browserpool

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// checkRemoteUpload refuses files whose total size is over
// MaxRemoteUploadBytes, before anything is read.
func (s *Session) checkRemoteUpload(op, tab string, paths []string) error {
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // Upload's own check words it
		}
		total += fi.Size()
	}
	if total <= MaxRemoteUploadBytes {
		return nil
	}
	return s.fileTransferError(op, tab,
		fmt.Sprintf("the files come to %d bytes, over the %d MiB a remote browser takes in one Upload (MaxRemoteUploadBytes)", total, MaxRemoteUploadBytes>>20),
		"upload smaller files (or fewer at once), or run this task on a local browser, which reads the files itself without a limit")
}

// The page side of a remote upload: uploadPush adds a base64 chunk to the
// parts of file i; uploadSet makes the files and sets them on the input.
const (
	uploadParts = `function() { return []; }`
	uploadPush  = `function(parts, i, b64) {
  const s = atob(b64), u = new Uint8Array(s.length);
  for (let k = 0; k < s.length; k++) u[k] = s.charCodeAt(k);
  (parts[i] = parts[i] || []).push(u);
  return true;
}`
	uploadSet = `function(parts, metas) {
  const dt = new DataTransfer();
  metas.forEach((m, i) => dt.items.add(new File(parts[i] || [], m.name, {type: m.type, lastModified: m.lastModified})));
  this.files = dt.files;
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return this.files.length;
}`
)

// uploadRemote sets the files at paths on the file input tg of a remote
// browser, sending their bytes (see the Room comment).
func (x *tabExt) uploadRemote(ctx context.Context, op string, tg refTarget, paths []string) error {
	type meta struct {
		Name         string  `json:"name"`
		Type         string  `json:"type"`
		LastModified float64 `json:"lastModified"`
	}
	metas := make([]meta, len(paths))
	datas := make([][]byte, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if datas[i], err = os.ReadFile(p); err != nil {
			return err
		}
		metas[i] = meta{Name: filepath.Base(p), Type: mime.TypeByExtension(filepath.Ext(p)), LastModified: float64(fi.ModTime().UnixMilli())}
		if j := strings.IndexByte(metas[i].Type, ';'); j >= 0 {
			metas[i].Type = metas[i].Type[:j] // as Chrome types a file: no parameters
		}
	}
	f := tg.f
	group := x.newGroup()
	defer releaseGroup(ctx, f, group)
	objs, err := x.resolveIn(ctx, tg.in(), group, tg.node)
	if err != nil {
		return err
	}
	this := objs[0]
	parts, err := x.callFn(ctx, op, f, this, uploadParts, nil, false)
	if err != nil {
		return err
	}
	for i, b := range datas {
		for off := 0; off < len(b); off += remoteChunk {
			end := min(off+remoteChunk, len(b))
			if _, err := x.callFn(ctx, op, f, this, uploadPush, []any{objectArg(parts.ObjectID), i, base64.StdEncoding.EncodeToString(b[off:end])}, true); err != nil {
				return err
			}
		}
	}
	res, err := x.callFn(ctx, op, f, this, uploadSet, []any{objectArg(parts.ObjectID), metas}, true)
	if err != nil {
		return err
	}
	if got, _ := strconv.Atoi(string(res.Value)); got != len(paths) {
		return fmt.Errorf("the page holds %s files after the upload, want %d", res.Value, len(paths))
	}
	return nil
}
