package browserpool

// RemoteUploadJS is the page JavaScript of an upload to a remote browser
// (make the parts array, push a base64 chunk, set the files), so a fake
// browser can answer it by identity. It exists only in tests.
var RemoteUploadJS = struct{ Parts, Push, Set string }{uploadParts, uploadPush, uploadSet}
