package llm

import (
	"encoding/json"
	"time"
)

// Role is who speaks a Message.
type Role string

// The roles of a chat.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a chat.
type Message struct {
	Role    Role
	Content string
	// Reasoning is what the assistant thought before answering
	// (reasoning_content, reasoning, or a leading <think>…</think>). It is
	// never sent back to the server.
	Reasoning string
	// ToolCalls are the assistant's calls.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
}

// ToolCall is one call the assistant asked for.
type ToolCall struct {
	// ID is the server's, or "call_<n>" when it gave none or the call was
	// printed as text.
	ID   string
	Name string
	// Arguments is a JSON object's text ("{}" when empty).
	Arguments string
	// FromText is set when the call was recognised in the content rather
	// than sent natively.
	FromText bool
}

// Tool is a tool the model may call.
type Tool struct {
	Name, Description string
	// Parameters is the tool's JSON Schema (an MCP inputSchema); empty
	// means no arguments.
	Parameters json.RawMessage
}

// Request is one chat completion request.
type Request struct {
	Messages []Message
	Tools    []Tool
	// ToolChoice is "", "auto", "none" or "required".
	ToolChoice  string
	MaxTokens   int
	Temperature *float64
	// JSONSchema, when set, constrains the answer to JSON matching it
	// (response_format json_schema); a server that refuses that with a 400
	// is asked again for any JSON object (json_object), with the schema in
	// the system prompt.
	JSONSchema json.RawMessage
}

// Sink receives a streamed answer as it arrives, on the goroutine that
// called Chat. Either function may be nil.
type Sink struct {
	// Content receives the answer's visible text. Text that may be a tool
	// call printed by the model is held back until it is clear; what turns
	// out to be prose still arrives, only later.
	Content func(string)
	// Reasoning receives the model's reasoning.
	Reasoning func(string)
}

// Usage counts the tokens of one request.
type Usage struct {
	PromptTokens, CompletionTokens int
	// Estimated is set when the server reported nothing and the counts are
	// EstimateTokens guesses.
	Estimated bool
}

// Response is the assistant's answer to a Request.
type Response struct {
	Message Message
	Usage   Usage
	// FinishReason is the server's: "stop", "length", "tool_calls"…; tool
	// calls printed as text leave it "stop", so look at Message.ToolCalls.
	// It is empty when a stream ended without one: the server went away
	// mid-answer.
	FinishReason string
	// FirstToken is how long the first reasoning, content or tool-call delta
	// took to arrive; without streaming, how long the whole answer took.
	FirstToken time.Duration
}

// EstimateTokens guesses the tokens in s: a quarter of its bytes, rounded
// up. It is cheap and errs high for English, which keeps a context window
// from overflowing.
func EstimateTokens(s string) int {
	return (len(s) + 3) / 4
}

// estimateUsage guesses the usage of a request and its answer.
func estimateUsage(req Request, m Message) Usage {
	u := Usage{Estimated: true}
	for _, msg := range req.Messages {
		u.PromptTokens += 4 + EstimateTokens(msg.Content)
		for _, tc := range msg.ToolCalls {
			u.PromptTokens += EstimateTokens(tc.Name) + EstimateTokens(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		u.PromptTokens += 8 + EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	u.PromptTokens += len(req.JSONSchema) / 4
	u.CompletionTokens = EstimateTokens(m.Content) + EstimateTokens(m.Reasoning)
	for _, tc := range m.ToolCalls {
		u.CompletionTokens += EstimateTokens(tc.Name) + EstimateTokens(tc.Arguments)
	}
	return u
}
