// Package mcpkit owns what every Domo MCP server shares: declaring tools with
// all four annotations stated, decoding and validating their arguments,
// turning failures into isError results a model can act on, progress
// notifications, and serving over stdio or Streamable HTTP with a bearer
// token. It holds no server's own tools and must never import host code.
package mcpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/domo-agent/domo/internal/argcheck"
)

// Hint is the value of one tool annotation. Its zero value means "not
// stated", which NewServer refuses: mcp-go's defaults (destructive,
// open-world) are wrong for most of our tools, so every tool says what it is.
type Hint uint8

// The two stated values of a Hint.
const (
	unstated Hint = iota
	Yes
	No
)

func (h Hint) ptr() *bool {
	switch h {
	case Yes:
		b := true
		return &b
	case No:
		b := false
		return &b
	}
	return nil
}

// Annotations are the four behaviour hints of a tool. All four must be set.
type Annotations struct {
	ReadOnly    Hint
	Destructive Hint
	Idempotent  Hint
	OpenWorld   Hint
}

// check reports which hints are unstated or contradictory.
func (a Annotations) check() error {
	var errs []error
	for _, h := range []struct {
		name string
		v    Hint
	}{{"ReadOnly", a.ReadOnly}, {"Destructive", a.Destructive}, {"Idempotent", a.Idempotent}, {"OpenWorld", a.OpenWorld}} {
		if h.v != Yes && h.v != No {
			errs = append(errs, fmt.Errorf("annotation %s is not stated", h.name))
		}
	}
	if a.ReadOnly == Yes && a.Destructive == Yes {
		errs = append(errs, errors.New("a read-only tool cannot be destructive"))
	}
	return errors.Join(errs...)
}

// Tool is one tool of a server: its MCP definition and its handler.
type Tool struct {
	Def         mcp.Tool
	Annotations Annotations
	Handler     server.ToolHandlerFunc
	err         error // a declaration fault, reported by NewServer
	schema      func() (*argcheck.Schema, error)
}

// Verify reports declaration faults, including an input schema that does
// not compile, which otherwise shows only at the tool's first call.
func (t Tool) Verify() error {
	if t.err != nil {
		return t.err
	}
	if err := t.Annotations.check(); err != nil {
		return fmt.Errorf("tool %s: %w", t.Def.Name, err)
	}
	if _, err := t.schema(); err != nil {
		return fmt.Errorf("tool %s: input schema: %w", t.Def.Name, err)
	}
	return nil
}

// Option adjusts a tool declaration.
type Option func(*toolConfig)

type toolConfig struct {
	title       string
	inputTweak  func(*jsonschema.Schema)
	outputType  func() (*jsonschema.Schema, error)
	outputTweak func(*jsonschema.Schema)
}

// Title sets the human-readable title shown by clients.
func Title(t string) Option { return func(c *toolConfig) { c.title = t } }

// InputSchema lets a tool refine the schema inferred from its argument
// struct: bounds, enums, defaults, formats.
func InputSchema(f func(s *jsonschema.Schema)) Option {
	return func(c *toolConfig) { c.inputTweak = f }
}

// Output declares that the tool returns structured content of type T, and
// publishes T's schema as the tool's output schema. f, when not nil, refines
// the inferred schema.
func Output[T any](f func(s *jsonschema.Schema)) Option {
	return func(c *toolConfig) {
		c.outputType = func() (*jsonschema.Schema, error) { return jsonschema.For[T](nil) }
		c.outputTweak = f
	}
}

// Validator is implemented by argument structs that check more than their
// schema can say. The error text goes to the model as is.
type Validator interface {
	Validate() error
}

// Handler runs a tool with decoded, validated arguments. A returned error
// becomes an isError result carrying its message, so messages must tell the
// model what to do next.
type Handler[In any] func(ctx context.Context, req mcp.CallToolRequest, in In) (*mcp.CallToolResult, error)

// NewTool declares a tool whose arguments decode into In. The input schema
// is inferred from In (field tag `jsonschema:"description"`; fields without
// omitempty are required) and unknown arguments are rejected.
func NewTool[In any](name, description string, ann Annotations, h Handler[In], opts ...Option) Tool {
	var cfg toolConfig
	for _, o := range opts {
		o(&cfg)
	}
	t := Tool{Annotations: ann}
	t.Def = mcp.NewTool(name, mcp.WithDescription(description))
	t.Def.Annotations = mcp.ToolAnnotation{
		Title:           cfg.title,
		ReadOnlyHint:    ann.ReadOnly.ptr(),
		DestructiveHint: ann.Destructive.ptr(),
		IdempotentHint:  ann.Idempotent.ptr(),
		OpenWorldHint:   ann.OpenWorld.ptr(),
	}
	t.Def.Title = cfg.title
	in, err := schemaJSON(func() (*jsonschema.Schema, error) { return jsonschema.For[In](nil) }, cfg.inputTweak)
	if err != nil {
		t.err = fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	t.Def.InputSchema = mcp.ToolInputSchema{}
	t.Def.RawInputSchema = in
	// Compiling a schema costs more than the rest of a cold start, so it
	// waits for the tool's first call; Verify compiles it in tests.
	t.schema = sync.OnceValues(func() (*argcheck.Schema, error) { return argcheck.Compile(name, in) })
	if cfg.outputType != nil {
		out, err := schemaJSON(cfg.outputType, cfg.outputTweak)
		if err != nil {
			t.err = fmt.Errorf("tool %s: output schema: %w", name, err)
		}
		t.Def.RawOutputSchema = out
	}
	t.Handler = wrap(name, t.schema, h)
	return t
}

func schemaJSON(infer func() (*jsonschema.Schema, error), tweak func(*jsonschema.Schema)) (json.RawMessage, error) {
	s, err := infer()
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("schema type is %q, want object", s.Type)
	}
	dropNullable(s)
	if tweak != nil {
		tweak(s)
	}
	return json.Marshal(s)
}

// dropNullable turns the ["null", T] types that jsonschema.For gives slices
// and maps into plain T. Arguments and results never carry null there, and
// single types map onto every model provider's schema dialect (Gemini's
// OpenAPI subset rejects type arrays).
func dropNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNullable(p)
	}
	dropNullable(s.Items)
	if s.AdditionalProperties != nil {
		dropNullable(s.AdditionalProperties)
	}
	for _, d := range s.Defs {
		dropNullable(d)
	}
}

// wrap checks arguments against the input schema, decodes them strictly,
// runs Validate, converts errors and panics into isError results, and
// reports cancellation plainly.
func wrap[In any](name string, compiled func() (*argcheck.Schema, error), h Handler[In]) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				slog.Error("tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
				res, err = Errorf("internal error in %s: %v; this is a bug in the server, not in your arguments", name, p), nil
			}
		}()
		raw, err := argsJSON(req.GetRawArguments())
		if err != nil {
			return Errorf("invalid arguments for %s: %v", name, err), nil
		}
		schema, err := compiled()
		if err != nil {
			return Errorf("internal error in %s: its input schema does not compile: %v", name, err), nil
		}
		if verr := schema.Check(raw); verr != nil {
			return Errorf("invalid arguments for %s: %v", name, verr), nil
		}
		in, derr := decode[In](raw)
		if derr != nil {
			return Errorf("invalid arguments for %s: %v", name, derr), nil
		}
		if v, ok := any(&in).(Validator); ok {
			if verr := v.Validate(); verr != nil {
				return Errorf("invalid arguments for %s: %v", name, verr), nil
			}
		}
		res, herr := h(ctx, req, in)
		if ctx.Err() != nil && (herr != nil || res == nil) {
			return Errorf("%s was cancelled before it finished", name), nil
		}
		if herr != nil {
			return mcp.NewToolResultError(herr.Error()), nil
		}
		if res == nil {
			return Errorf("internal error in %s: no result", name), nil
		}
		return res, nil
	}
}

// argsJSON returns the arguments of a call as JSON text; they arrive
// either raw or already decoded, depending on the transport.
func argsJSON(raw any) ([]byte, error) {
	switch v := raw.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		if len(bytes.TrimSpace(v)) == 0 || string(bytes.TrimSpace(v)) == "null" {
			return []byte("{}"), nil
		}
		return v, nil
	case []byte:
		return argsJSON(json.RawMessage(v))
	}
	return json.Marshal(raw)
}

func decode[In any](b []byte) (In, error) {
	var in In
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, err
	}
	return in, nil
}

// Errorf returns an isError result. The message should say what went wrong
// and what the model can do about it.
func Errorf(format string, args ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf(format, args...))
}

// Text returns a plain text result.
func Text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

// Structured returns a result carrying v as structured content and text as
// the human-readable rendering that clients without structured content show.
func Structured(text string, v any) *mcp.CallToolResult {
	return mcp.NewToolResultStructured(v, text)
}

// SetInt bounds an integer property of a schema to lo..hi with default def.
func SetInt(s *jsonschema.Schema, prop string, lo, hi, def int) {
	p := s.Properties[prop]
	l, h := float64(lo), float64(hi)
	p.Minimum, p.Maximum = &l, &h
	p.Default = json.RawMessage(fmt.Sprint(def))
}

// SetEnum restricts a string property to values, the first being the
// default.
func SetEnum(s *jsonschema.Schema, prop string, values ...string) {
	p := s.Properties[prop]
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
	p.Default = json.RawMessage(fmt.Sprintf("%q", values[0]))
}
