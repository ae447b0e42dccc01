// Room: the command line (flags, stdio or HTTP, shutdown). No locks.

// Command browserpool-mcp serves browserpool's isolated Chromium sessions
// to AI agents as Model Context Protocol tools: over stdio (the default,
// what desktop agents launch) or streamable HTTP (-http 127.0.0.1:PORT, one
// long-lived server shared by many agents).
//
// Each MCP client session gets browsers of its own, which no other client
// can see; they close when the client disconnects or stays idle. With
// -cdp-endpoint the tools drive the user's running Chrome instead; with
// -browserless or -selenium-grid every browser is leased from that fleet.
//
// Bounds. A page tool's work on its tab is bounded by -call-timeout
// (default 30s, not counting the launch of the client's browser): a page
// stuck in a script answers then, the library stops the script, and the
// error says so. browser_navigate and the history tools keep the
// navigation timeout, browser_wait_for its own timeout argument (at most
// 110 s), browser_download with a ref two minutes. A call also ends when
// its client goes away: its MCP session ends, or over HTTP the request
// carrying it is cut.
//
// Lifetimes. -idle-timeout (default 10m) closes a browser that got no
// tool call; the client's next call opens a new one and says why the old
// pages are gone. Over HTTP, -session-timeout (default 24h, 0 for never)
// ends an MCP session that sent no request, with its browsers. At
// -max-sessions a new browser closes the least recently used idle one,
// unless that is another client's browser used within -evict-grace
// (default 30s): the new one is then refused, with an error saying when to
// retry. SIGINT or
// SIGTERM stops the calls in flight at once, ends every session and
// closes every browser.
//
// Policy. -allow-host and -block-host (each repeatable, or a
// comma-separated list of host names, *.wildcards, IPs or CIDR prefixes)
// set the browsers' network policy; without them every host but
// link-local and cloud-metadata addresses is reachable. -upload-dir
// confines browser_file_upload to the files inside a directory (symbolic
// links followed; relative paths are taken from it). Without it, over
// stdio any file the server's user may read can be uploaded; over HTTP
// none can, since any client that reaches the server could send any of
// them to any site.
//
// Logs go to stderr only: on stdio, stdout is the protocol.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const version = "0.1.0"

// TokenEnv holds the bearer token HTTP clients must send, when -token-file
// is not given.
const TokenEnv = "BROWSERPOOL_MCP_TOKEN"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "browserpool-mcp:", err)
		os.Exit(1)
	}
}

// options are the parsed command line.
type options struct {
	cfg            Config
	http           string
	token          string
	origins        []string
	tracePath      string
	verbose        bool
	sessionTimeout time.Duration
}

// listFlag is a flag that may be given several times, each a
// comma-separated list.
type listFlag struct{ list *[]string }

func (f listFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ",")
}

func (f listFlag) Set(v string) error {
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*f.list = append(*f.list, item)
		}
	}
	return nil
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("browserpool-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.http, "http", "", "serve streamable HTTP at this address (e.g. 127.0.0.1:8931) instead of stdio")
	tokenFile := fs.String("token-file", "", "file holding the bearer token HTTP clients must send (else $"+TokenEnv+"); required unless -http is a loopback address, where without one only this user's processes may connect")
	origins := fs.String("allow-origin", "", "comma-separated Origins allowed to call the HTTP server from a web page (e.g. http://localhost:6274); requests with any other Origin are refused")
	fs.StringVar(&o.cfg.CDPEndpoint, "cdp-endpoint", "", "attach to the user's Chrome at this DevTools endpoint (e.g. http://127.0.0.1:9222) instead of launching browsers")
	fs.StringVar(&o.cfg.Pool.Root, "root", "", "directory for profiles and the manifest (default: the user's cache dir)")
	fs.StringVar(&o.cfg.Pool.OutputDir, "output-dir", "", "directory for screenshots and downloads, one subdirectory per session (default: <root>/output)")
	fs.StringVar(&o.cfg.Pool.Executable, "browser", "", "browser executable (default: search PATH for chromium, google-chrome, ...)")
	browserless := fs.String("browserless", "", "lease each browser from the browserless v2 server at this URL (e.g. ws://127.0.0.1:3000) instead of launching it here; its token comes from -fleet-token-file or $"+FleetTokenEnv)
	grid := fs.String("selenium-grid", "", "lease each browser from the Selenium Grid 4 at this URL (e.g. http://127.0.0.1:4444) instead of launching it here")
	gridCaps := fs.String("grid-capabilities", "", "the Grid session's alwaysMatch capabilities as a JSON object (default: headless chrome); give goog:chromeOptions.binary when the node's browser is not where chromedriver looks")
	fleetTokenFile := fs.String("fleet-token-file", "", "file holding the browserless token (else $"+FleetTokenEnv+")")
	fs.DurationVar(&o.cfg.Pool.IdleTimeout, "idle-timeout", 0, "close a browser after this long without a tool call; the client stays connected, and its next call opens a new browser and says why (default 10m)")
	fs.IntVar(&o.cfg.PerClient, "max-sessions-per-client", 0, "browser sessions one client may hold (default 1)")
	fs.IntVar(&o.cfg.Global, "max-sessions", 0, "browser sessions over all clients; at the limit the least recently used idle one closes, unless it is another client's used within -evict-grace: then the new one is refused (default 8)")
	fs.IntVar(&o.cfg.ScreenshotMax, "screenshot-max", DefaultScreenshotMax, "long side in pixels screenshots are scaled down to; negative for none")
	fs.DurationVar(&o.cfg.DialogTimeout, "dialog-timeout", DefaultDialogTimeout, "how long a JavaScript dialog waits for browser_handle_dialog before it is dismissed")
	fs.DurationVar(&o.cfg.EvictGrace, "evict-grace", DefaultEvictGrace, "at -max-sessions, another client's browser used within this long is not closed to make room: the new browser is refused, saying when to retry; 0 always closes the least recently used idle one")
	fs.DurationVar(&o.cfg.CallTimeout, "call-timeout", DefaultCallTimeout, "how long a page tool may work on its tab before it gives up; a script that keeps the page busy is then stopped (browser_navigate, browser_wait_for and browser_download keep the longer bounds their own waits need)")
	fs.DurationVar(&o.sessionTimeout, "session-timeout", DefaultSessionTimeout, "over HTTP, end a client's MCP session (and its browsers) after this long without a request; 0 for never. Not -idle-timeout, which closes only the browser")
	fs.Var(listFlag{&o.cfg.Pool.Network.Allow}, "allow-host", "the only hosts the browsers may reach: host names, *.wildcards, IPs or CIDRs, comma-separated; may be repeated (default: every host but link-local and cloud-metadata addresses)")
	fs.Var(listFlag{&o.cfg.Pool.Network.Block}, "block-host", "hosts the browsers may never reach: host names, *.wildcards, IPs or CIDRs, comma-separated; may be repeated (e.g. 127.0.0.0/8,::1,localhost keeps them off this machine)")
	fs.StringVar(&o.cfg.UploadDir, "upload-dir", "", "browser_file_upload takes only files inside this directory (symbolic links followed). Over stdio, without it any file this user may read; over HTTP, without it no file")
	fs.StringVar(&o.tracePath, "trace", "", "append the redacted action trace to this file, one JSON object per line")
	fs.BoolVar(&o.verbose, "v", false, "log debug lines to stderr")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, og := range strings.Split(*origins, ",") {
		if og = strings.TrimSpace(og); og != "" {
			o.origins = append(o.origins, strings.TrimSuffix(og, "/"))
		}
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return nil, fmt.Errorf("-token-file: %w", err)
		}
		o.token = strings.TrimSpace(string(b))
		if o.token == "" {
			return nil, fmt.Errorf("-token-file %s is empty", *tokenFile)
		}
	} else {
		o.token = os.Getenv(TokenEnv)
	}
	if err := o.fleet(*browserless, *grid, *gridCaps, *fleetTokenFile); err != nil {
		return nil, err
	}
	if o.http != "" && o.token == "" && !loopback(o.http) {
		return nil, fmt.Errorf("-http %s is not a loopback address: give a bearer token with -token-file or $%s, or bind 127.0.0.1", o.http, TokenEnv)
	}
	if o.cfg.CallTimeout <= 0 {
		return nil, fmt.Errorf("-call-timeout %v: give a positive duration such as 30s", o.cfg.CallTimeout)
	}
	switch {
	case o.sessionTimeout < 0:
		return nil, fmt.Errorf("-session-timeout %v: give a positive duration such as 24h, or 0 for never", o.sessionTimeout)
	case o.sessionTimeout == 0:
		o.sessionTimeout = -1 // HTTPOptions' never
	}
	switch {
	case o.cfg.EvictGrace < 0:
		return nil, fmt.Errorf("-evict-grace %v: give a duration such as 30s, or 0 for none", o.cfg.EvictGrace)
	case o.cfg.EvictGrace == 0:
		o.cfg.EvictGrace = -1 // Config's none
	}
	// Over HTTP every client that reaches the server could upload any file
	// this user may read to any site: only from -upload-dir.
	o.cfg.NoUploads = o.http != "" && o.cfg.UploadDir == ""
	if len(o.cfg.Pool.Network.Allow)+len(o.cfg.Pool.Network.Block) > 0 {
		switch {
		case o.cfg.CDPEndpoint != "":
			return nil, errors.New("-allow-host and -block-host apply to the browsers the server launches; -cdp-endpoint drives the user's own Chrome, which they cannot reach")
		case o.cfg.Pool.Launcher != nil:
			return nil, errors.New("-allow-host and -block-host apply to the browsers the server launches on this machine; a browser leased with -browserless or -selenium-grid reaches the network from the fleet's machine: enforce the rules there (its proxy or firewall), or drop the fleet flag")
		}
	}
	return o, nil
}

// FleetTokenEnv names the environment variable holding the browserless
// token when -fleet-token-file is not given.
const FleetTokenEnv = "BROWSERPOOL_FLEET_TOKEN"

// fleet sets the pool's launcher from the fleet flags: at most one fleet,
// and not with flags that only a local or attached browser takes.
func (o *options) fleet(browserless, grid, gridCaps, tokenFile string) error {
	if browserless == "" && grid == "" {
		if gridCaps != "" || tokenFile != "" {
			return errors.New("-grid-capabilities and -fleet-token-file need -selenium-grid or -browserless")
		}
		return nil
	}
	switch {
	case browserless != "" && grid != "":
		return errors.New("give -browserless or -selenium-grid, not both: one server leases every browser")
	case o.cfg.CDPEndpoint != "":
		return errors.New("-cdp-endpoint attaches to the user's browser; it cannot be combined with a fleet flag")
	case o.cfg.Pool.Executable != "":
		return errors.New("-browser names a local executable; a fleet flag leases browsers from a server instead: give one or the other")
	}
	if browserless != "" {
		if gridCaps != "" {
			return errors.New("-grid-capabilities is for -selenium-grid")
		}
		token := os.Getenv(FleetTokenEnv)
		if tokenFile != "" {
			b, err := os.ReadFile(tokenFile)
			if err != nil {
				return fmt.Errorf("-fleet-token-file: %w", err)
			}
			token = strings.TrimSpace(string(b))
		}
		o.cfg.Pool.Launcher = &browserpool.Browserless{URL: browserless, Token: token}
		return nil
	}
	if tokenFile != "" {
		return errors.New("-fleet-token-file is for -browserless; give the Grid's credentials in its URL")
	}
	l := &browserpool.SeleniumGrid{URL: grid}
	if gridCaps != "" {
		if err := json.Unmarshal([]byte(gridCaps), &l.Capabilities); err != nil || l.Capabilities == nil {
			return fmt.Errorf("-grid-capabilities: want a JSON object such as {\"browserName\":\"chrome\"}: %v", err)
		}
	}
	o.cfg.Pool.Launcher = l
	return nil
}

// loopback reports whether addr (host:port) binds loopback interfaces only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// run serves until ctx ends or, on stdio, the client closes stdin.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	o.cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if o.tracePath != "" {
		f, err := os.OpenFile(o.tracePath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("-trace: %w", err)
		}
		defer f.Close()
		o.cfg.Trace = f
	}
	s, err := NewServer(o.cfg)
	if err != nil {
		return errors.New(flagNames.Replace(err.Error())) // a bad -allow-host is the library's Network.Allow[i]
	}
	defer s.Close()
	// A signal stops the calls in flight at once: closing a session waits
	// for its calls, and HTTP Shutdown for their requests.
	defer context.AfterFunc(ctx, s.shutdown)()
	if o.cfg.CDPEndpoint != "" {
		// Say at once, in the log, whether the user's browser answers; the
		// tools return the same advice when it does not. The pool's check
		// keeps a connection waiting on Chrome's Allow prompt for the
		// tools' attach, so the user is asked once.
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := s.pool.CheckCDP(cctx, o.cfg.CDPEndpoint); err != nil {
			o.cfg.Logger.Warn("the browser at -cdp-endpoint does not answer yet", "err", err)
		}
		cancel()
	}
	if o.http == "" {
		var t mcp.Transport = &mcp.StdioTransport{}
		if stdin != os.Stdin || stdout != os.Stdout {
			t = &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
		}
		// The session closes once the calls the signal stopped have
		// answered: a closed session drops answers not yet written.
		rctx, closeSession := context.WithCancel(context.WithoutCancel(ctx))
		defer closeSession()
		defer context.AfterFunc(ctx, func() { s.shutdown(); s.drain(); closeSession() })()
		err = s.mcp.Run(rctx, t)
		if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
			err = nil
		}
		return errors.Join(err, s.Close())
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return err
	}
	if o.token == "" {
		// Loopback (parse refuses anything else without a token): every
		// local user could connect, so only this one may.
		ln = ownerListener{Listener: ln, uid: os.Getuid()}
	}
	hs := &http.Server{
		Handler:           s.HTTPHandler(HTTPOptions{Token: o.token, AllowedOrigins: o.origins, SessionTimeout: o.sessionTimeout}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(o.cfg.Logger.Handler(), slog.LevelWarn),
	}
	// Shutdown waits for every connection to go idle, and a client's open
	// event stream (its GET) never does: closing the server ends the MCP
	// sessions, and with them their streams.
	hs.RegisterOnShutdown(func() { s.Close() })
	o.cfg.Logger.Warn("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "token", o.token != "")
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
		if hs.Shutdown(sctx) != nil {
			hs.Close() // what is still open after the grace
		}
		cancel()
		<-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Close())
}

// httpShutdownGrace bounds the HTTP server's shutdown: the requests of the
// calls the shutdown stopped get their answers within it.
var httpShutdownGrace = 5 * time.Second

// flagNames names the library's Config fields the command sets by the
// flags that set them.
var flagNames = strings.NewReplacer("Network.Allow", "-allow-host", "Network.Block", "-block-host")

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
