package mcpkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// drainTimeout bounds how long serveStdio waits, once the client closed its
// input, for requests still running to answer.
const drainTimeout = 5 * time.Second

// serveStdio serves one client over newline-delimited JSON-RPC. It replaces
// mcp-go's stdio server, which parses every line five times and hands each
// request through three goroutines; here a line is parsed once to route it
// and each request runs on its own goroutine straight into HandleMessage.
// Round-trip latency is what a model's tool loop waits on.
func serveStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer) error {
	sess := &stdioSession{
		w:             bufio.NewWriterSize(out, 64<<10),
		notifications: make(chan mcp.JSONRPCNotification, 100),
		pending:       map[string]chan rpcReply{},
	}
	if err := s.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register session: %w", err)
	}
	defer s.UnregisterSession(context.Background(), sess.SessionID())

	ctx, cancel := context.WithCancel(s.WithContext(ctx, sess))
	defer cancel()
	notifyDone := make(chan struct{})
	go func() {
		defer close(notifyDone)
		sess.pumpNotifications(ctx)
	}()

	var inflight sync.WaitGroup
	readErr := make(chan error, 1)
	rd := &reader{br: bufio.NewReaderSize(in, 64<<10), sess: sess, srv: s, inflight: &inflight, done: readErr}
	go rd.loop(ctx)

	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case err = <-readErr:
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	// The client has said all it will say: let requests in flight answer,
	// within reason, then cancel what remains.
	done := make(chan struct{})
	go func() { inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
		slog.Warn("requests still running after input closed; cancelling them")
	case <-ctx.Done():
	}
	cancel()
	<-done
	<-notifyDone
	return err
}

// reader reads the client's messages. A request is handled by the
// goroutine that read it, so its path from read to reply crosses no
// goroutine boundary: on a small, loaded machine each crossing costs more
// than a quick tool's work. A request still running after handOffAfter gets
// a fresh reader started beside it, so a slow tool never holds up a
// cancellation, a ping, or the client's reply to a request of ours (such
// as roots/list) that the tool is waiting on.
type reader struct {
	br       *bufio.Reader
	sess     *stdioSession
	srv      *server.MCPServer
	inflight *sync.WaitGroup
	done     chan<- error
}

const handOffAfter = 200 * time.Microsecond

// maxMessageBytes bounds one incoming message, so a client cannot make the
// server buffer without end. The largest legitimate one is a write_file of
// the maximum content, JSON-escaped.
const maxMessageBytes = 64 << 20

var errTooLong = errors.New("message too long")

// readLine reads up to and including the next newline. A line longer than
// max is read through and dropped, and errTooLong returned.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			return nil, errTooLong
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (r *reader) loop(ctx context.Context) {
	for {
		if ctx.Err() != nil {
			return
		}
		line, err := readLine(r.br, maxMessageBytes)
		if errors.Is(err, errTooLong) {
			_ = r.sess.write(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST,
				fmt.Sprintf("message over %d MiB refused", maxMessageBytes>>20), nil))
			continue
		}
		if err != nil {
			if len(bytes.TrimSpace(line)) > 0 {
				r.sess.dispatch(ctx, r.srv, line, r.inflight, true)
			}
			r.done <- err
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		// Counted before another reader can exist, so that reader's end of
		// input never finds the count at zero while this line still runs.
		r.inflight.Add(1)
		// state: 0 handling, 1 handled here, 2 reading handed off.
		var state atomic.Int32
		timer := time.AfterFunc(handOffAfter, func() {
			if state.CompareAndSwap(0, 2) {
				go r.loop(ctx)
			}
		})
		r.sess.dispatch(ctx, r.srv, line, r.inflight, false)
		r.inflight.Done()
		if !state.CompareAndSwap(0, 1) {
			return
		}
		timer.Stop()
	}
}

// envelope is just enough of a JSON-RPC message to route it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type rpcReply struct {
	result json.RawMessage
	err    error
}

// stdioSession is the one client session of a stdio server.
type stdioSession struct {
	initialized atomic.Bool
	logLevel    atomic.Value // mcp.LoggingLevel

	mu         sync.Mutex
	clientInfo mcp.Implementation
	clientCaps mcp.ClientCapabilities

	wmu sync.Mutex
	w   *bufio.Writer

	notifications chan mcp.JSONRPCNotification

	pmu     sync.Mutex
	pending map[string]chan rpcReply
	nextID  atomic.Int64
}

var (
	_ server.ClientSession         = (*stdioSession)(nil)
	_ server.SessionWithLogging    = (*stdioSession)(nil)
	_ server.SessionWithClientInfo = (*stdioSession)(nil)
	_ server.SessionWithRoots      = (*stdioSession)(nil)
)

func (s *stdioSession) SessionID() string { return "stdio" }
func (s *stdioSession) Initialize()       { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool { return s.initialized.Load() }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.notifications
}

func (s *stdioSession) SetLogLevel(l mcp.LoggingLevel) { s.logLevel.Store(l) }
func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := s.logLevel.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientInfo
}

func (s *stdioSession) SetClientInfo(i mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientInfo = i
}

func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps
}

func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientCaps = c
}

// write sends one message and flushes it.
func (s *stdioSession) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.w.Write(b)
	s.w.WriteByte('\n')
	return s.w.Flush()
}

func (s *stdioSession) pumpNotifications(ctx context.Context) {
	for {
		select {
		case n := <-s.notifications:
			if err := s.write(n); err != nil {
				slog.Debug("write notification", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}

// dispatch routes one incoming line: replies to our own requests go to
// their waiter, notifications and requests are handled on this goroutine,
// and the last line of input, with no reader after it to wait for, is
// handled on its own goroutine, counted in inflight.
func (s *stdioSession) dispatch(ctx context.Context, srv *server.MCPServer, line []byte, inflight *sync.WaitGroup, last bool) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		_ = s.write(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR, "parse error: "+err.Error(), nil))
		return
	}
	hasID := len(env.ID) > 0 && string(env.ID) != "null"
	switch {
	case env.Method == "" && hasID:
		s.deliver(env)
	case !hasID:
		s.handle(ctx, srv, nil, line)
	case last:
		inflight.Go(func() { s.handle(ctx, srv, env.ID, line) })
	default:
		s.handle(ctx, srv, env.ID, line)
	}
}

func (s *stdioSession) handle(ctx context.Context, srv *server.MCPServer, id json.RawMessage, line []byte) {
	var resp mcp.JSONRPCMessage
	func() {
		defer func() {
			if p := recover(); p != nil {
				slog.Error("panic handling a message", "panic", p)
				if id != nil {
					resp = mcp.NewJSONRPCError(mcp.NewRequestId(rawID(id)), mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", p), nil)
				}
			}
		}()
		resp = srv.HandleMessage(ctx, line)
	}()
	if resp == nil {
		return
	}
	if err := s.write(resp); err != nil {
		slog.Debug("write response", "err", err)
	}
}

func rawID(id json.RawMessage) any {
	var v any
	_ = json.Unmarshal(id, &v)
	return v
}

func (s *stdioSession) deliver(env envelope) {
	s.pmu.Lock()
	ch, ok := s.pending[string(env.ID)]
	delete(s.pending, string(env.ID))
	s.pmu.Unlock()
	if !ok {
		slog.Debug("reply to no pending request", "id", string(env.ID))
		return
	}
	if env.Error != nil {
		ch <- rpcReply{err: fmt.Errorf("client answered with error %d: %s", env.Error.Code, env.Error.Message)}
		return
	}
	ch <- rpcReply{result: env.Result}
}

// request sends a request to the client and waits for its reply.
func (s *stdioSession) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := strconv.FormatInt(s.nextID.Add(1), 10)
	ch := make(chan rpcReply, 1)
	s.pmu.Lock()
	s.pending[id] = ch
	s.pmu.Unlock()
	defer func() {
		s.pmu.Lock()
		delete(s.pending, id)
		s.pmu.Unlock()
	}()
	msg := map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": json.RawMessage(id), "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := s.write(msg); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ListRoots asks the client for its roots.
func (s *stdioSession) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	raw, err := s.request(ctx, string(mcp.MethodListRoots), nil)
	if err != nil {
		return nil, err
	}
	var res mcp.ListRootsResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode roots/list reply: %w", err)
	}
	return &res, nil
}
