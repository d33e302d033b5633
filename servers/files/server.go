// Package files is domo-files: filesystem tools confined to the directories
// the operator allows. Every path argument goes through Sandbox.Resolve and
// every operation through the os.Root of an allowed directory; nothing in
// this package opens a path any other way. It must not import host code or
// another server.
package files

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// Options are the limits of a files server.
type Options struct {
	// MaxReadBytes caps what one text read returns.
	MaxReadBytes int64
	// MaxMediaBytes caps the size of a file read_media_file encodes.
	MaxMediaBytes int64
	// MaxWriteBytes caps the content write_file and edit_file may write.
	MaxWriteBytes int64
}

// DefaultOptions are the limits used unless flags say otherwise.
func DefaultOptions() Options {
	return Options{
		MaxReadBytes:  1 << 20,
		MaxMediaBytes: 10 << 20,
		MaxWriteBytes: 10 << 20,
	}
}

// Server holds the operator's sandbox and, per client session, the sandbox
// that client's MCP roots narrow it to.
type Server struct {
	base     *Sandbox
	opts     Options
	sessions sync.Map // session ID -> *session
}

type session struct {
	mu    sync.Mutex
	sb    *Sandbox
	stale bool
}

// New builds a files server over the allowed directories dirs.
func New(dirs []string, opts Options) (*Server, error) {
	sb, err := NewSandbox(dirs)
	if err != nil {
		return nil, err
	}
	return &Server{base: sb, opts: opts}, nil
}

const instructions = `domo-files reads and changes files inside the allowed directories only (see list_allowed_directories). ` +
	`Paths may be absolute or relative to an allowed directory. Prefer edit_file over rewriting whole files, ` +
	`directory_tree with a small depth over listing everything, and grep_files to find text.`

// MCP builds the MCP server offering the files tools.
func (s *Server) MCP() (*mcpkit.Server, error) {
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) {
		s.sessions.Delete(cs.SessionID())
	})
	srv, err := mcpkit.NewServer("domo-files", instructions, s.Tools(), server.WithHooks(hooks))
	if err != nil {
		return nil, err
	}
	srv.MCP.AddNotificationHandler(mcp.MethodNotificationRootsListChanged, func(ctx context.Context, n mcp.JSONRPCNotification) {
		// Some transports deliver notifications without the session in ctx;
		// then every session asks again, which costs one roots/list each.
		cs := server.ClientSessionFromContext(ctx)
		s.sessions.Range(func(id, v any) bool {
			if cs == nil || cs.SessionID() == id {
				st := v.(*session)
				st.mu.Lock()
				st.stale = true
				st.mu.Unlock()
			}
			return true
		})
	})
	return srv, nil
}

// Tools lists every tool of the files server.
func (s *Server) Tools() []mcpkit.Tool {
	return []mcpkit.Tool{
		s.readTextFile(),
		s.readMediaFile(),
		s.readMultipleFiles(),
		s.writeFile(),
		s.editFile(),
		s.createDirectory(),
		s.listDirectory(),
		s.directoryTree(),
		s.moveFile(),
		s.deleteFile(),
		s.searchFiles(),
		s.grepFiles(),
		s.getFileInfo(),
		s.listAllowedDirectories(),
	}
}

// sandbox is the sandbox for the calling session: the operator's, narrowed
// by the client's roots when the client declares roots.
func (s *Server) sandbox(ctx context.Context) *Sandbox {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return s.base
	}
	ci, ok := cs.(server.SessionWithClientInfo)
	if !ok || ci.GetClientCapabilities().Roots == nil {
		return s.base
	}
	v, _ := s.sessions.LoadOrStore(cs.SessionID(), &session{stale: true})
	st := v.(*session)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.stale && st.sb != nil {
		return st.sb
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := server.ServerFromContext(ctx).RequestRoots(rctx, mcp.ListRootsRequest{})
	if err != nil {
		// The client offered roots but did not list them: keep the operator's
		// directories, which are never wider than what the operator allowed.
		slog.Warn("could not list the client's roots; using the allowed directories", "err", err)
		if st.sb == nil {
			return s.base
		}
		return st.sb
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	if len(uris) == 0 {
		st.sb, st.stale = s.base, false
		return st.sb
	}
	sb, ignored := s.base.Narrow(uris)
	if len(ignored) > 0 {
		slog.Warn("client roots outside the allowed directories are ignored", "roots", ignored)
	}
	st.sb, st.stale = sb, false
	return sb
}

// resolve resolves a path argument for the calling session.
func (s *Server) resolve(ctx context.Context, p string) (Location, error) {
	return s.sandbox(ctx).Resolve(p)
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// resolveNoFollow resolves p for the calling session like resolve, except
// that a symlink as the last component is the location itself, not what
// it points to: move_file and delete_file act on names, and a link is a
// name. Symlinks before the last component are followed as Resolve
// follows them.
func (s *Server) resolveNoFollow(ctx context.Context, p string) (Location, error) {
	return s.sandbox(ctx).ResolveNoFollow(p)
}
