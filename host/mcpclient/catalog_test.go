package mcpclient

import (
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestCatalogueNamesClashesOnly(t *testing.T) {
	tool := func(name string) mcp.Tool { return mcp.Tool{Name: name} }
	server := func(name string, state State, tools ...mcp.Tool) *Server {
		s := &Server{Name: name, State: state}
		s.setTools(tools)
		return s
	}
	sup := &Supervisor{servers: map[string]*Server{
		"files":  server("files", StateReady, tool("read_text_file"), tool("search")),
		"github": server("github", StateReady, tool("search"), tool("create_issue")),
		"down":   server("down", StateFailed, tool("read_text_file")),
	}}
	var got []string
	for _, tl := range sup.Catalogue() {
		got = append(got, tl.Name+"@"+tl.Server)
	}
	want := "[create_issue@github files__search@files github__search@github read_text_file@files]"
	if fmt.Sprint(got) != want {
		t.Errorf("catalogue = %v, want %s", got, want)
	}
	if tl, ok := sup.Lookup("github__search"); !ok || tl.Server != "github" || tl.Tool.Name != "search" {
		t.Errorf("lookup = %+v, %v", tl, ok)
	}
	if _, ok := sup.Lookup("search"); ok {
		t.Error("a clashing name resolved without its prefix")
	}
}
