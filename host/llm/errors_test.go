package llm

import (
	"strings"
	"testing"
)

func TestServerMessage(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{name: "OpenAI", body: `{"error":{"message":"model \"x\" not found","type":"api_error","code":null}}`, want: `model "x" not found`},
		{name: "llama.cpp numeric code", body: `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`, want: "the request exceeds the available context size"},
		{name: "error as a string", body: `{"error":"Unexpected endpoint or method. (GET /v1/x)"}`, want: "Unexpected endpoint or method. (GET /v1/x)"},
		{name: "vLLM", body: `{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, want: "The model does not exist."},
		{name: "FastAPI", body: `{"detail":"Not Found"}`, want: "Not Found"},
		{name: "plain text", body: "404 page not found\n", want: "404 page not found"},
		{name: "HTML", body: "<html><body>Bad Gateway</body></html>", want: ""},
		{name: "long", body: strings.Repeat("x", 600), want: strings.Repeat("x", 500) + "…"},
	}
	for _, tt := range tests {
		if got := serverMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("%s: serverMessage = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestHTTPErrorHints(t *testing.T) {
	tests := []struct {
		name string
		err  HTTPError
		want string
	}{
		{name: "missing model", err: HTTPError{StatusCode: 404, Message: `model "qwen3" not found, try pulling it first`, URL: "http://h/v1", Model: "qwen3"}, want: "`ollama pull qwen3`"},
		{name: "wrong URL", err: HTTPError{StatusCode: 404, Message: "File Not Found", URL: "http://h", Model: "qwen3"}, want: "is http://h the server's OpenAI-compatible /v1 URL?"},
		{name: "key wanted", err: HTTPError{StatusCode: 401, URL: "http://h/v1"}, want: "llm.api_key_env"},
		{name: "server error", err: HTTPError{StatusCode: 500, Message: "boom", URL: "http://h/v1"}, want: "the LLM server at http://h/v1 answered 500 Internal Server Error: boom"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q does not say %q", tt.name, got, tt.want)
		}
	}
}
