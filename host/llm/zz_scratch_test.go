package llm

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestScratchObjectArgs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"read_file","arguments":{"path":"/a"}}}]},"finish_reason":"tool_calls"}]}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/v1", Config{Model: "m"})
	resp, err := c.Chat(t.Context(), Request{Messages: userAsks("x"), Tools: testTools}, nil)
	t.Logf("%+v %v", resp, err)
}
