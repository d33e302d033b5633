package mcpclient

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// Progress is one MCP progress notification for a call.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// progressHub routes progress notifications, which arrive on a session's
// read goroutine, to the call that asked for them by its token.
type progressHub struct {
	mu    sync.Mutex
	next  atomic.Uint64
	calls map[string]func(Progress)
}

// ProgressToken registers fn for the progress of one call and returns the
// token to send with it and a function that unregisters it. fn runs on a
// session's read goroutine: it must be quick and must not call the server.
func (sup *Supervisor) ProgressToken(fn func(Progress)) (mcp.ProgressToken, func()) {
	h := &sup.progress
	token := fmt.Sprintf("domo-%d", h.next.Add(1))
	h.mu.Lock()
	if h.calls == nil {
		h.calls = map[string]func(Progress){}
	}
	h.calls[token] = fn
	h.mu.Unlock()
	return token, func() {
		h.mu.Lock()
		delete(h.calls, token)
		h.mu.Unlock()
	}
}

func (h *progressHub) dispatch(n mcp.JSONRPCNotification) {
	if n.Method != "notifications/progress" {
		return
	}
	f := n.Params.AdditionalFields
	token := fmt.Sprint(f["progressToken"])
	h.mu.Lock()
	fn := h.calls[token]
	h.mu.Unlock()
	if fn == nil {
		return
	}
	p := Progress{}
	p.Progress, _ = f["progress"].(float64)
	p.Total, _ = f["total"].(float64)
	p.Message, _ = f["message"].(string)
	fn(p)
}
