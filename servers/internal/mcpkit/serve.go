package mcpkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Version is the release of the Domo servers, set at build time with
// -ldflags "-X github.com/domo-agent/domo/servers/internal/mcpkit.Version=…".
var Version = "dev"

// ErrUsage marks errors caused by how the program was invoked; main exits 2.
var ErrUsage = errors.New("usage")

// App describes one server binary.
type App struct {
	// Name is the binary name, e.g. "domo-files".
	Name string
	// Summary is one line for --help.
	Summary string
	// Args names the positional arguments for --help, e.g. "DIR...".
	Args string
	// Flags registers the server's own flags.
	Flags func(fs *flag.FlagSet)
	// Build constructs the server from the positional arguments once flags
	// are parsed. listOnly is true for --list-tools, where required
	// arguments may be absent.
	Build func(ctx context.Context, args []string, listOnly bool) (*Server, error)
}

// Run is the whole life of a server binary: parse flags, build, serve until
// ctx ends or the input closes. main only turns its error into an exit code.
func (a App) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(a.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		httpAddr  = fs.String("http", "", "serve Streamable HTTP at `ADDR` (host:port), endpoint /mcp, instead of stdio")
		tokenFile = fs.String("token-file", "", "read the HTTP bearer token from `FILE` (or set DOMO_TOKEN)")
		noAuth    = fs.Bool("no-auth", false, "serve HTTP without a token; only allowed on a loopback address")
		logLevel  = fs.String("log-level", "info", "log `LEVEL` on stderr: debug, info, warn or error")
		version   = fs.Bool("version", false, "print the version and exit")
		listTools = fs.Bool("list-tools", false, "print the tools this server offers and exit")
	)
	if a.Flags != nil {
		a.Flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s — %s\n\nUsage: %s [flags] %s\n\nFlags:\n", a.Name, a.Summary, a.Name, a.Args)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if *version {
		fmt.Fprintf(stdout, "%s %s\n", a.Name, Version)
		return nil
	}
	tuneGC()
	level, err := parseLevel(*logLevel)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	srv, err := a.Build(ctx, fs.Args(), *listTools)
	if err != nil {
		return err
	}
	if srv.Close != nil {
		defer srv.Close()
	}
	if *listTools {
		return srv.printTools(stdout)
	}
	if *httpAddr == "" {
		if *tokenFile != "" || *noAuth {
			return fmt.Errorf("%w: --token-file and --no-auth only apply with --http", ErrUsage)
		}
		log.Info("serving on stdio", "server", a.Name, "version", Version)
		return serveStdio(ctx, srv.MCP, stdin, stdout)
	}
	token, err := loadToken(*tokenFile, os.Getenv("DOMO_TOKEN"))
	if err != nil {
		return err
	}
	if token == "" {
		if !*noAuth {
			return fmt.Errorf("%w: --http needs a bearer token: give --token-file FILE or set DOMO_TOKEN (or --no-auth on a loopback address)", ErrUsage)
		}
		if !isLoopback(*httpAddr) {
			return fmt.Errorf("%w: --no-auth is only allowed on a loopback address, not %s", ErrUsage, *httpAddr)
		}
	} else if *noAuth {
		return fmt.Errorf("%w: --no-auth conflicts with the token from --token-file or DOMO_TOKEN", ErrUsage)
	}
	return srv.serveHTTP(ctx, *httpAddr, token, log)
}

// tuneGC trades memory for latency: a server's live heap is a few
// megabytes, and collecting at 5× instead of 2× of it cuts a quick tool
// call's CPU by a quarter. The soft limit makes the collector work harder
// again before a large read pushes the process past 512 MiB. GOGC and
// GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("unknown --log-level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

func loadToken(file, env string) (string, error) {
	if file == "" {
		return strings.TrimSpace(env), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", file)
	}
	if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 {
		slog.Warn("token file is readable by other users; chmod 600 it", "file", file)
	}
	return t, nil
}

func isLoopback(addr string) bool {
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

func (s *Server) serveHTTP(ctx context.Context, addr, token string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	mcpHandler := server.NewStreamableHTTPServer(s.MCP,
		server.WithEndpointPath("/mcp"),
		server.WithStreamableHTTPLogger(log),
	)
	mux := http.NewServeMux()
	mux.Handle("/mcp", RequireBearer(token, mcpHandler))
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving Streamable HTTP", "server", s.Name, "url", "http://"+ln.Addr().String()+"/mcp", "auth", token != "")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = mcpHandler.Shutdown(shutdownCtx)
	return hs.Shutdown(shutdownCtx)
}

func (s *Server) printTools(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s %s: %d tools\n", s.Name, Version, len(s.Tools))
	for _, t := range s.Tools {
		var marks []string
		switch {
		case t.Annotations.ReadOnly == Yes:
			marks = append(marks, "read-only")
		case t.Annotations.Destructive == Yes:
			marks = append(marks, "destructive")
		default:
			marks = append(marks, "writes")
		}
		if t.Annotations.OpenWorld == Yes {
			marks = append(marks, "open-world")
		}
		desc, _, _ := strings.Cut(t.Def.Description, ". ")
		if r := []rune(desc); len(r) > 90 {
			desc = string(r[:89]) + "…"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Def.Name, strings.Join(marks, ","), desc)
	}
	return tw.Flush()
}

// Main is the whole main function of a server binary: it runs a until an
// interrupt or SIGTERM and turns its error into the exit code (2 for a
// usage error, 1 for any other).
func Main(a App) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := a.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", a.Name, err)
		if errors.Is(err, ErrUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
