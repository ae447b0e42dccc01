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
	cfg       Config
	http      string
	token     string
	origins   []string
	tracePath string
	verbose   bool
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
	fs.DurationVar(&o.cfg.Pool.IdleTimeout, "idle-timeout", 0, "close a browser after this long without a tool call (default 10m)")
	fs.IntVar(&o.cfg.PerClient, "max-sessions-per-client", 0, "browser sessions one client may hold (default 1)")
	fs.IntVar(&o.cfg.Global, "max-sessions", 0, "browser sessions over all clients; at the limit the least recently used idle one closes (default 8)")
	fs.IntVar(&o.cfg.ScreenshotMax, "screenshot-max", DefaultScreenshotMax, "long side in pixels screenshots are scaled down to; negative for none")
	fs.DurationVar(&o.cfg.DialogTimeout, "dialog-timeout", DefaultDialogTimeout, "how long a JavaScript dialog waits for browser_handle_dialog before it is dismissed")
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
		return err
	}
	defer s.Close()
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
		err = s.mcp.Run(ctx, t)
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
		Handler:           s.HTTPHandler(HTTPOptions{Token: o.token, AllowedOrigins: o.origins}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(o.cfg.Logger.Handler(), slog.LevelWarn),
	}
	o.cfg.Logger.Warn("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "token", o.token != "")
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hs.Shutdown(sctx)
		cancel()
		<-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Close())
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
