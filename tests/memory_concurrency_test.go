package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/tests/testenv"
)

// TestMemoryTwoProcesses runs two domo-memory processes on one database,
// each making 5,000 mixed calls at the same time: new memories, memories
// both write (which must end up stored once), updates, forgets and links.
// Afterwards every write is there exactly once and every forget held.
func TestMemoryTwoProcesses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	bin := testenv.Binary(t, "domo-memory")
	ops := 5000
	if testing.Short() {
		ops = 500
	}
	type outcome struct {
		kept, forgotten map[string]string // id -> text
		edited          map[string]bool
		links           []string
		err             error
	}
	results := make([]outcome, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		c := stdioClient(t, []string{bin, "--db", db}, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := outcome{kept: map[string]string{}, forgotten: map[string]string{}, edited: map[string]bool{}}
			defer func() { results[p] = o }()
			r := rand.New(rand.NewPCG(uint64(p), 7))
			var own []string
			for i := range ops {
				var err error
				switch n := r.IntN(100); {
				case n < 60 || len(own) < 10:
					text := fmt.Sprintf("Process %d wrote note %d about %s.", p, i, []string{"gardening", "taxes", "chess", "Lisbon", "the dentist"}[i%5])
					var id string
					id, err = rememberOne(c, map[string]any{"text": text, "tags": []string{fmt.Sprintf("p%d", p)}})
					if err == nil {
						o.kept[id] = text
						own = append(own, id)
					}
				case n < 75:
					_, err = rememberOne(c, map[string]any{"text": fmt.Sprintf("Shared fact number %d is known to both processes.", r.IntN(300))})
				case n < 85:
					id := own[r.IntN(len(own))]
					err = callTool(c, "memory_update", map[string]any{"id": id, "add_tags": []string{"edited"}}, nil)
					o.edited[id] = true
				case n < 95:
					k := r.IntN(len(own))
					id := own[k]
					own = slices.Delete(own, k, k+1)
					err = callTool(c, "memory_forget", map[string]any{"ids": []string{id}}, nil)
					o.forgotten[id] = o.kept[id]
					delete(o.kept, id)
					delete(o.edited, id)
				default:
					from := fmt.Sprintf("Entity %d-%d", p, i)
					err = callTool(c, "memory_link", map[string]any{"from": from, "relation": "knows", "to": "Hub"}, nil)
					o.links = append(o.links, from+" —knows→ Hub")
				}
				if err != nil {
					o.err = fmt.Errorf("process %d, call %d: %w", p, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, o := range results {
		if o.err != nil {
			t.Fatal(o.err)
		}
	}

	c := stdioClient(t, []string{bin, "--db", db}, nil)
	var all []struct {
		ID   string   `json:"id"`
		Text string   `json:"text"`
		Tags []string `json:"tags"`
	}
	for offset := 0; ; offset += 200 {
		var page struct {
			Memories []struct {
				ID   string   `json:"id"`
				Text string   `json:"text"`
				Tags []string `json:"tags"`
			} `json:"memories"`
			NextOffset int `json:"next_offset"`
		}
		if err := callTool(c, "memory_list", map[string]any{"limit": 200, "offset": offset, "sort": "oldest"}, &page); err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Memories...)
		if page.NextOffset == 0 {
			break
		}
	}
	byID := map[string]int{}
	texts := map[string]int{}
	for i, m := range all {
		byID[m.ID] = i
		texts[m.Text]++
	}
	for text, n := range texts {
		if n > 1 {
			t.Errorf("%q is stored %d times", text, n)
		}
	}
	kept, lost := 0, 0
	for p, o := range results {
		for id, text := range o.kept {
			kept++
			i, ok := byID[id]
			if !ok || all[i].Text != text {
				lost++
				if lost < 5 {
					t.Errorf("process %d's %s (%q) is missing", p, id, text)
				}
				continue
			}
			if o.edited[id] && !slices.Contains(all[i].Tags, "edited") {
				t.Errorf("process %d's update of %s was lost: tags %v", p, id, all[i].Tags)
			}
		}
		for id := range o.forgotten {
			if _, ok := byID[id]; ok {
				t.Errorf("process %d forgot %s, but it is still stored", p, id)
			}
		}
	}
	shared := 0
	for text := range texts {
		if strings.HasPrefix(text, "Shared fact") {
			shared++
		}
	}
	if lost > 0 || len(all) != kept+shared {
		t.Errorf("%d memories stored; want the %d kept plus %d shared; %d lost", len(all), kept, shared, lost)
	}
	var ents struct {
		Entities []struct {
			Relations []struct{ From, Relation, To string } `json:"relations"`
		} `json:"entities"`
	}
	if err := callTool(c, "memory_entities", map[string]any{"names": []string{"Hub"}}, &ents); err != nil {
		t.Fatal(err)
	}
	want := len(results[0].links) + len(results[1].links)
	if len(ents.Entities) != 1 || len(ents.Entities[0].Relations) != want {
		t.Errorf("the hub has %v relations, want %d", len(ents.Entities), want)
	}
	t.Logf("%d calls per process: %d memories (%d shared facts), %d forgotten, %d links", ops, len(all), shared, len(results[0].forgotten)+len(results[1].forgotten), want)
}

// callTool calls a tool and decodes its structured content into out (when
// not nil); a protocol error or an isError result is an error. Unlike
// callOK it may run off the test's goroutine.
func callTool(c *client.Client, tool string, args any, out any) error {
	res, err := callResult(c, tool, args)
	if err != nil {
		return err
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		return json.Unmarshal(b, out)
	}
	return nil
}

// callResult calls a tool; a protocol error or an isError result is an
// error.
func callResult(c *client.Client, tool string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s failed: %s", tool, resultText(res))
	}
	return res, nil
}

func rememberOne(c *client.Client, args map[string]any) (string, error) {
	var out struct {
		Results []struct{ ID string } `json:"results"`
	}
	if err := callTool(c, "memory_remember", args, &out); err != nil {
		return "", err
	}
	return out.Results[0].ID, nil
}
