package memory

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// App is the domo-memory command: its flags and server.
func App() mcpkit.App {
	var (
		db     string
		emb    Embeddings
		keyEnv string
	)
	return mcpkit.App{
		Name:    "domo-memory",
		Summary: "MCP server for long-term memory in a local SQLite file",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&db, "db", "", "the memory database `FILE` (default $DOMO_MEMORY_DB, else $XDG_DATA_HOME/domo/memory.db)")
			fs.StringVar(&emb.URL, "embeddings-url", os.Getenv("DOMO_EMBEDDINGS_URL"), "an OpenAI-compatible API `URL` (e.g. http://127.0.0.1:11434/v1) whose /embeddings re-rank recall; off when empty")
			fs.StringVar(&emb.Model, "embeddings-model", os.Getenv("DOMO_EMBEDDINGS_MODEL"), "the embedding `MODEL` to ask for, e.g. nomic-embed-text")
			fs.StringVar(&keyEnv, "embeddings-key-env", "", "the environment `VARIABLE` holding the embeddings API key, if it needs one")
		},
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("%w: domo-memory takes no arguments (got %q); the database is --db FILE", mcpkit.ErrUsage, args[0])
			}
			if listOnly {
				return NewServer(nil).MCP()
			}
			if emb.URL != "" && emb.Model == "" {
				return nil, fmt.Errorf("%w: --embeddings-url needs --embeddings-model", mcpkit.ErrUsage)
			}
			if keyEnv != "" {
				emb.APIKey = os.Getenv(keyEnv)
			}
			path := db
			if path == "" {
				var err error
				if path, err = DefaultPath(); err != nil {
					return nil, err
				}
			}
			var e *Embeddings
			if emb.URL != "" {
				e = &emb
			}
			store, err := Open(ctx, path, e)
			if err != nil {
				return nil, err
			}
			go func() {
				<-ctx.Done()
				store.Close()
			}()
			return NewServer(store).MCP()
		},
	}
}
